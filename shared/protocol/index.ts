/**
 * The discussion protocol: every message the extension client and the
 * terminal client exchange with the discussion server, and every message the
 * chat webview exchanges with the extension. One module, imported by every
 * side, so a renamed field is a compile error wherever it is sent or read.
 *
 * Documented for people in docs/protocol.md; keep the two in step.
 *
 * No runtime dependencies (no vscode, no vscode-languageserver, no Node): the
 * webview bundle imports it too.
 */
export * from './config';
export * from './task';
export * from './decisions';
export * from './review';
export * from './events';
export * from './progress';
export * from './attachments';
export * from './requests';
export * from './webview';
export * from './errors';
export * from './codeActions';
export * from './ide';
export * from './languageModels';
