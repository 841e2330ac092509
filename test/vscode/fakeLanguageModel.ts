/**
 * The test-only extension in fakeLmExtension/ that contributes a VS Code
 * language model (the proposed `chatProvider` API of VS Code 1.100). The
 * runners load it beside the extension under development; nothing else does.
 */
import * as path from 'node:path';

/** The extension's folder, in the sources (it is plain JS: nothing to build). */
export const FAKE_LM_EXTENSION_DIR = path.resolve(__dirname, '../../../test/vscode/fakeLmExtension');
/** publisher.name in its package.json. */
export const FAKE_LM_EXTENSION_ID = 'repo-discuss-test.fake-language-model';
