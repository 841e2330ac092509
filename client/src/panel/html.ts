import { randomBytes } from 'node:crypto';

/**
 * The chat webview's HTML shell. Everything visible is built by the script;
 * this page only loads it under a CSP that allows nothing but the extension's
 * own files and the one script carrying this load's nonce. No inline script,
 * no inline style, nothing remote: a reply that smuggles markup past the
 * sanitizer still cannot run or fetch anything.
 */

export interface PanelHtmlOptions {
  /** `webview.cspSource`: the origin the webview serves extension files from. */
  cspSource: string;
  /** Fresh for every load, from `makeNonce()`. */
  nonce: string;
  scriptUri: string;
  styleUri: string;
  codiconsUri: string;
  title: string;
}

export function renderPanelHtml(options: PanelHtmlOptions): string {
  const { cspSource, nonce } = options;
  // A nonce or source with a quote or `;` would rewrite the policy itself.
  if (!/^[A-Za-z0-9+/_=-]{16,}$/.test(nonce)) throw new Error('The nonce must be at least 16 base64 characters.');
  // VS Code's cspSource is a list such as `'self' https://*.vscode-cdn.net`;
  // each token must be a keyword or a host/scheme source, so nothing can
  // close the directive and smuggle in another.
  const tokens = cspSource.trim().split(/\s+/);
  if (!cspSource.trim() || !tokens.every((t) => /^'(self|none)'$/.test(t) || /^[A-Za-z0-9+.:/*_-]+$/.test(t))) {
    throw new Error(`Not a usable CSP source: ${cspSource}`);
  }

  const csp = [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    // Not covered by default-src: keep the document from being re-based or posting anywhere.
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ') + ';';

  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${escapeAttribute(csp)}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <link rel="stylesheet" href="${escapeAttribute(options.codiconsUri)}">
  <link rel="stylesheet" href="${escapeAttribute(options.styleUri)}">
  <title>${escapeText(options.title)}</title>
</head>
<body>
  <div id="app" class="app" aria-busy="true"></div>
  <noscript>This panel needs JavaScript, which VS Code webviews normally allow.</noscript>
  <script nonce="${escapeAttribute(nonce)}" src="${escapeAttribute(options.scriptUri)}"></script>
</body>
</html>
`;
}

/** 128 random bits, base64: unguessable per load, and valid in a CSP nonce-source. */
export function makeNonce(): string {
  return randomBytes(16).toString('base64');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
