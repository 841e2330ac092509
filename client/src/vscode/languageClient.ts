/**
 * The language client library, bundled on its own (dist/languageClient.js)
 * and loaded by ServerClient when it starts the server, not with the
 * extension: it is most of the extension's code (about 430 of 460 KB
 * minified), and requiring it was most of the activation time.
 */
export { CloseAction, ErrorAction, LanguageClient, State, TransportKind } from 'vscode-languageclient/node';
export type { ErrorHandler, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
