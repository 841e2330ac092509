import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { makeNonce, renderPanelHtml, type PanelHtmlOptions } from '../../../client/src/panel/html';

// What VS Code 1.100 actually gives as webview.cspSource.
const CSP_SOURCE = "'self' https://*.vscode-cdn.net";
const RESOURCE_ORIGIN = 'https://file+.vscode-resource.vscode-cdn.net';
const OPTIONS: PanelHtmlOptions = {
  cspSource: CSP_SOURCE,
  nonce: 'T2sgdGhpcyBpcyBhIG5vbmNl',
  scriptUri: `${RESOURCE_ORIGIN}/ext/media/dist/chat.js`,
  styleUri: `${RESOURCE_ORIGIN}/ext/media/chat.css`,
  codiconsUri: `${RESOURCE_ORIGIN}/ext/media/dist/codicon.css`,
  title: 'Repo Discuss',
};

/** Parsed without running anything: jsdom executes no scripts by default. */
function documentOf(html: string): Document {
  return new JSDOM(html).window.document;
}

function policyOf(document: Document): Map<string, string[]> {
  const meta = document.querySelector('meta[http-equiv="Content-Security-Policy"]');
  assert.ok(meta, 'no CSP meta element');
  const directives = new Map<string, string[]>();
  for (const directive of (meta.getAttribute('content') ?? '').split(';')) {
    const [name, ...sources] = directive.trim().split(/\s+/);
    if (name) directives.set(name, sources);
  }
  return directives;
}

describe('the chat panel HTML', () => {
  it('declares a CSP that allows nothing by default and only extension files and the nonce otherwise', () => {
    const policy = policyOf(documentOf(renderPanelHtml(OPTIONS)));
    assert.deepEqual(policy.get('default-src'), ["'none'"]);
    assert.deepEqual(policy.get('img-src'), [...CSP_SOURCE.split(' '), 'data:']);
    assert.deepEqual(policy.get('style-src'), CSP_SOURCE.split(' '));
    assert.deepEqual(policy.get('font-src'), CSP_SOURCE.split(' '));
    assert.deepEqual(policy.get('script-src'), [`'nonce-${OPTIONS.nonce}'`]);
    assert.deepEqual(policy.get('base-uri'), ["'none'"]);
    assert.deepEqual(policy.get('form-action'), ["'none'"]);
  });

  it('allows no inline code, no eval and no source beyond the extension origin', () => {
    const policy = policyOf(documentOf(renderPanelHtml(OPTIONS)));
    for (const [name, sources] of policy) {
      for (const source of sources) {
        assert.doesNotMatch(source, /unsafe-(inline|eval|hashes)|^\*$|^https?:$|^'strict-dynamic'$/, `${name} allows ${source}`);
        if (/^https?:\/\//.test(source)) assert.ok(CSP_SOURCE.split(' ').includes(source), `${name} names a remote source ${source}`);
      }
    }
  });

  it('loads exactly one script, carrying the nonce and coming from the extension', () => {
    const document = documentOf(renderPanelHtml(OPTIONS));
    const scripts = Array.from(document.querySelectorAll('script'));
    assert.equal(scripts.length, 1);
    assert.equal(scripts[0].getAttribute('nonce'), OPTIONS.nonce);
    assert.equal(scripts[0].getAttribute('src'), OPTIONS.scriptUri);
    assert.equal(scripts[0].textContent, '');
  });

  it('has no inline style or event handler attributes and loads only the given style sheets', () => {
    const document = documentOf(renderPanelHtml(OPTIONS));
    assert.equal(document.querySelector('style, [style]'), null);
    for (const element of Array.from(document.querySelectorAll('*'))) {
      for (const attribute of Array.from(element.attributes)) assert.ok(!attribute.name.startsWith('on'), `${attribute.name} on <${element.tagName}>`);
    }
    assert.deepEqual(
      Array.from(document.querySelectorAll('link[rel="stylesheet"]'), (link) => link.getAttribute('href')),
      [OPTIONS.codiconsUri, OPTIONS.styleUri],
    );
  });

  it('escapes the title and URIs instead of letting them add markup', () => {
    const html = renderPanelHtml({ ...OPTIONS, title: '</title><script>alert(1)</script>', styleUri: 'x" onload="alert(1)' });
    const document = documentOf(html);
    assert.equal(document.querySelectorAll('script').length, 1);
    assert.equal(document.title, '</title><script>alert(1)</script>');
    assert.equal(document.querySelector('[onload]'), null);
  });

  it('refuses a nonce or CSP source that could rewrite the policy', () => {
    assert.throws(() => renderPanelHtml({ ...OPTIONS, nonce: "abc' 'unsafe-inline" }), /nonce/);
    assert.throws(() => renderPanelHtml({ ...OPTIONS, nonce: 'short' }), /nonce/);
    assert.throws(() => renderPanelHtml({ ...OPTIONS, cspSource: "https://x; script-src 'unsafe-inline'" }), /CSP source/);
  });

  it('makes a fresh, unguessable nonce that is valid in a CSP nonce-source', () => {
    const nonces = new Set(Array.from({ length: 100 }, makeNonce));
    assert.equal(nonces.size, 100);
    for (const nonce of nonces) {
      assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/);
      assert.equal(Buffer.from(nonce, 'base64').length, 16);
      assert.doesNotThrow(() => renderPanelHtml({ ...OPTIONS, nonce }));
    }
  });
});
