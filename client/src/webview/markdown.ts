/**
 * Model replies as HTML the panel can show: Markdown (markdown-it, raw HTML
 * off), highlighted code (highlight.js), then DOMPurify with an allow-list.
 *
 * The model's text is untrusted: it may quote hostile files or be steered by
 * them. Nothing it writes may run script, load remote content, submit forms
 * or navigate the webview. Three layers hold that line: markdown-it escapes
 * raw HTML and refuses unsafe link targets, links are rewritten to inert
 * forms the panel handles itself, and DOMPurify removes anything outside a
 * short list of tags and attributes. The webview's CSP is the fourth.
 */
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/common';
import MarkdownIt from 'markdown-it';
import { findRepoPaths, formatRepoPath, parseCitedPath, parseRepoPath, type RepoPathRef } from './links';

type Token = ReturnType<MarkdownIt['parse']>[number];
type StateCore = Parameters<Parameters<MarkdownIt['core']['ruler']['push']>[1]>[0];
type Purifier = ReturnType<typeof DOMPurify>;
type SanitizeConfig = NonNullable<Parameters<Purifier['setConfig']>[0]>;

/** The browser window (or a jsdom one in tests) DOMPurify parses with. */
export type PurifyWindow = Parameters<typeof DOMPurify>[0];

export interface MarkdownRenderer {
  /** Sanitized HTML for a Markdown document. */
  render(markdown: string): string;
  /** Any HTML through the same allow-list as `render`'s output. */
  sanitize(html: string): string;
  /** Absolute path of the repository, so absolute citations inside it become links. */
  setRepoRoot(root: string | null): void;
}

export interface MarkdownRendererOptions {
  repoRoot?: string | null;
}

/** Code block buttons; main.ts finds them by this attribute. */
export const CODE_ACTION_ATTRIBUTE = 'data-code-action';
export type CodeAction = 'copy' | 'insert';

const ALLOWED_TAGS = [
  'a', 'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 's', 'del', 'code', 'pre', 'kbd',
  'blockquote', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span', 'div', 'button',
];
const DATA_ATTRIBUTES = ['data-path', 'data-line', 'data-end-line', CODE_ACTION_ATTRIBUTE];
const ALLOWED_ATTR = ['href', 'title', 'class', 'start', 'type', 'aria-label', 'aria-hidden', ...DATA_ATTRIBUTES];

/**
 * URLs DOMPurify lets through: http(s) with a host, fragments, and relative
 * references. No other scheme (`javascript:`, `data:`, `vbscript:`,
 * `command:`, `file:` …), and nothing protocol-relative (`//host`, `\\host`),
 * which would leave the webview's origin.
 */
const SAFE_URI = /^(?:https?:\/\/[^\s/\\]|#|(?![a-z][a-z0-9+.\-]*:|[\\/]{2}|\\)[^\s])/i;

const SANITIZE_CONFIG: SanitizeConfig = {
  ALLOWED_TAGS,
  ALLOWED_ATTR,
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOW_UNKNOWN_PROTOCOLS: false,
  ALLOWED_URI_REGEXP: SAFE_URI,
  // Plain values that need no URL check (a path like `a.ts` would fail it needlessly).
  ADD_URI_SAFE_ATTR: [...DATA_ATTRIBUTES, 'aria-label', 'aria-hidden', 'type', 'start'],
  FORBID_ATTR: ['style'],
  RETURN_TRUSTED_TYPE: false,
};

/** Minimal element surface the link hook needs, so this file compiles without DOM typings. */
interface AttributeHost {
  nodeName: string;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
}

export function createMarkdownRenderer(window: PurifyWindow, options: MarkdownRendererOptions = {}): MarkdownRenderer {
  const purify = DOMPurify(window);
  // DOMPurify without a usable DOM returns its input untouched: refuse instead.
  if (!purify.isSupported) throw new Error('DOMPurify cannot sanitize in this environment.');
  purify.addHook('afterSanitizeAttributes', (node) => enforceLinkForm(node as unknown as AttributeHost));

  let repoRoot = options.repoRoot ?? undefined;
  const pathOptions = () => ({ repoRoot });
  const md = createMarkdownIt(pathOptions);
  const sanitize = (html: string) => sanitizeWith(purify, html);
  return {
    render: (markdown) => sanitize(md.render(markdown)),
    sanitize,
    setRepoRoot: (root) => {
      repoRoot = root ?? undefined;
    },
  };
}

function sanitizeWith(purify: Purifier, html: string): string {
  return String(purify.sanitize(html, SANITIZE_CONFIG));
}

/**
 * Links leave the sanitizer in one of three forms: external (`http(s)`, opened
 * by the extension), a path link (`href="#"` plus data attributes), or an
 * in-page fragment. A relative href is never kept: the webview would resolve
 * it against its own origin.
 */
function enforceLinkForm(element: AttributeHost): void {
  if (element.nodeName !== 'A') return;
  const href = element.getAttribute('href');
  if (element.getAttribute('data-path') !== null) {
    element.setAttribute('href', '#');
    return;
  }
  if (href !== null && !/^https?:\/\//i.test(href) && !href.startsWith('#')) element.removeAttribute('href');
}

function createMarkdownIt(pathOptions: () => { repoRoot?: string }): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });
  // Only explicit http(s) URLs: fuzzy matching turns `README.md` into a link
  // to the Moldovan host readme.md.
  md.linkify.set({ fuzzyLink: false, fuzzyEmail: false, fuzzyIP: false });
  md.validateLink = (url) => isSafeLinkTarget(url, pathOptions());

  md.renderer.rules.fence = (tokens, idx) => {
    const token = tokens[idx];
    const info = token.info ? md.utils.unescapeAll(token.info).trim() : '';
    return codeBlockHtml(token.content, info.split(/\s+/, 1)[0] ?? '');
  };
  md.renderer.rules.code_block = (tokens, idx) => codeBlockHtml(tokens[idx].content, '');
  // No images: nothing remote loads in the panel. The alt text stays, linked
  // to the image when it is on the web.
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const alt = self.renderInlineAsText(token.children ?? [], options, env) || 'image';
    const src = token.attrGet('src') ?? '';
    if (!/^https?:\/\//i.test(src)) return escapeHtml(alt);
    return `<a href="${escapeHtml(src)}" class="external-link" title="${escapeHtml(src)}">${escapeHtml(alt)}</a>`;
  };

  md.core.ruler.push('repo_links', (state) => rewriteLinks(state, pathOptions()));
  md.core.ruler.push('table_alignment_classes', alignmentAsClasses);
  return md;
}

function isSafeLinkTarget(url: string, pathOptions: { repoRoot?: string }): boolean {
  const target = url.trim();
  if (/^https?:\/\/[^\s/\\]/i.test(target)) return true;
  if (target.startsWith('#')) return true;
  return parseRepoPath(decodeUrl(target), pathOptions) !== undefined;
}

/**
 * Gives every link its final form and turns cited paths in text and inline
 * code into path links. Runs after linkify, so text inside links is left
 * alone (no link in a link).
 */
function rewriteLinks(state: StateCore, pathOptions: { repoRoot?: string }): void {
  for (const block of state.tokens) {
    if (block.type !== 'inline' || !block.children) continue;
    const rewritten: Token[] = [];
    const openLinks: Token[] = [];
    for (const token of block.children) {
      if (token.type === 'link_open') {
        classifyLink(token, pathOptions);
        openLinks.push(token);
        rewritten.push(token);
      } else if (token.type === 'link_close') {
        const opener = openLinks.pop();
        if (opener) token.tag = opener.tag;
        rewritten.push(token);
      } else if (token.type === 'text' && openLinks.length === 0) {
        rewritten.push(...linkPathsInText(state, token, pathOptions));
      } else if (token.type === 'code_inline' && openLinks.length === 0) {
        const ref = parseCitedPath(token.content, pathOptions);
        if (ref) rewritten.push(pathLinkOpen(state, ref), token, linkClose(state));
        else rewritten.push(token);
      } else {
        rewritten.push(token);
      }
    }
    block.children = rewritten;
  }
}

function classifyLink(token: Token, pathOptions: { repoRoot?: string }): void {
  const href = token.attrGet('href') ?? '';
  if (/^https?:\/\//i.test(href)) {
    // The title shows where the link really goes, whatever its text claims.
    token.attrs = [['href', href], ['class', 'external-link'], ['title', href]];
    return;
  }
  if (href.startsWith('#')) {
    token.attrs = [['href', href]];
    return;
  }
  const ref = parseRepoPath(decodeUrl(href), pathOptions);
  if (ref) {
    token.attrs = pathLinkAttrs(ref);
    return;
  }
  token.tag = 'span';
  token.attrs = [['class', 'unresolved-link']];
}

function linkPathsInText(state: StateCore, token: Token, pathOptions: { repoRoot?: string }): Token[] {
  const matches = findRepoPaths(token.content, pathOptions);
  if (matches.length === 0) return [token];
  const pieces: Token[] = [];
  let cursor = 0;
  for (const match of matches) {
    if (match.start > cursor) pieces.push(textToken(state, token.content.slice(cursor, match.start)));
    pieces.push(pathLinkOpen(state, match), textToken(state, token.content.slice(match.start, match.end)), linkClose(state));
    cursor = match.end;
  }
  if (cursor < token.content.length) pieces.push(textToken(state, token.content.slice(cursor)));
  return pieces;
}

function pathLinkAttrs(ref: RepoPathRef): Array<[string, string]> {
  const attrs: Array<[string, string]> = [
    ['href', '#'],
    ['class', 'path-link'],
    ['data-path', ref.path],
  ];
  if (ref.line !== undefined) attrs.push(['data-line', String(ref.line)]);
  if (ref.endLine !== undefined) attrs.push(['data-end-line', String(ref.endLine)]);
  attrs.push(['title', `Open ${formatRepoPath(ref)}`]);
  return attrs;
}

function pathLinkOpen(state: StateCore, ref: RepoPathRef): Token {
  const token = new state.Token('link_open', 'a', 1);
  token.attrs = pathLinkAttrs(ref);
  return token;
}

function linkClose(state: StateCore): Token {
  return new state.Token('link_close', 'a', -1);
}

function textToken(state: StateCore, content: string): Token {
  const token = new state.Token('text', '', 0);
  token.content = content;
  return token;
}

/** markdown-it writes table alignment as style attributes, which the CSP and the sanitizer forbid. */
function alignmentAsClasses(state: StateCore): void {
  for (const token of state.tokens) {
    if (token.type !== 'th_open' && token.type !== 'td_open') continue;
    const style = token.attrGet('style');
    if (style === null) continue;
    const align = /text-align:\s*(left|right|center)/.exec(style)?.[1];
    token.attrs = (token.attrs ?? []).filter(([name]) => name !== 'style');
    if (align) token.attrJoin('class', `align-${align}`);
  }
}

function codeBlockHtml(code: string, language: string): string {
  const safeLanguage = /^[\w+#.-]{1,32}$/.test(language) ? language : '';
  const grammar = safeLanguage && hljs.getLanguage(safeLanguage) ? safeLanguage : '';
  let body = escapeHtml(code);
  if (grammar) {
    try {
      body = hljs.highlight(code, { language: grammar, ignoreIllegals: true }).value;
    } catch {
      // A grammar failing on odd input still leaves readable, escaped code.
    }
  }
  const label = safeLanguage ? `<span class="code-language">${escapeHtml(safeLanguage)}</span>` : '';
  const codeClass = grammar ? `hljs language-${escapeHtml(grammar)}` : 'hljs';
  return (
    '<div class="code-block"><div class="code-toolbar">' +
    label +
    codeButton('copy', 'Copy code', 'copy') +
    codeButton('insert', 'Insert code at the cursor', 'insert') +
    `</div><pre><code class="${codeClass}">${body}</code></pre></div>\n`
  );
}

function codeButton(action: CodeAction, label: string, icon: string): string {
  return (
    `<button type="button" class="code-action" ${CODE_ACTION_ATTRIBUTE}="${action}" aria-label="${label}" title="${label}">` +
    `<span class="codicon codicon-${icon}" aria-hidden="true"></span></button>`
  );
}

function decodeUrl(url: string): string {
  try {
    return decodeURI(url);
  } catch {
    return url;
  }
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => HTML_ESCAPES[char] ?? char);
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

// ---------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------

export interface StreamUpdate {
  /** Drop everything shown for this reply before applying the rest. */
  reset: boolean;
  /** Blocks that just became final: append once, never touched again. */
  frozenHtml: string;
  /** The open block(s) at the end: replaces the previous tail. */
  tailHtml: string;
}

const FENCE_OPEN = /^\s*(`{3,}|~{3,})(.*)$/;
const LIST_ITEM = /^(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)/;
/** Loose on purpose: a false hit only costs speed, a miss costs correctness. */
const REFERENCE_DEFINITION = /^[\s>*+\-\d.)]*\[[^\]]+\]:/;
/** First characters that begin a new top-level block whatever the rest of the line is. */
const NEW_BLOCK_START = /^[\p{L}#>`~|]/u;

/**
 * One reply rendered while it streams. The text is split at the last safe
 * block boundary into a frozen prefix, rendered once, and a live tail,
 * re-rendered on each delta; so a delta costs the size of the open block, not
 * of the reply.
 *
 * A boundary is safe when nothing after it can change how the text before it
 * renders: a blank line outside any code fence, followed by a line that
 * starts a new top-level block (not indented, not a list item, which could
 * continue a list above). Reference definitions are the one construct that
 * reaches backwards; once one appears, the reply is rendered whole. Together
 * these make the streamed HTML identical to rendering the final text at once.
 */
export class MarkdownStream {
  /**
   * The frozen source, kept only to answer `source` (the final message is
   * compared with it once). Nothing per delta reads it: scanning and slicing
   * a whole 100 KB reply on every frame copied it each time and left that much
   * garbage behind, so the later part of a long reply cost more to stream.
   */
  private readonly frozenSource: string[] = [];
  /** The text after the last safe boundary: all that a delta rescans and re-renders. */
  private open = '';
  /** Offset in `open` up to which complete lines have been scanned. */
  private scanEnd = 0;
  private fence: { char: string; length: number } | null = null;
  private afterBlankLine = false;
  private wholeDocument = false;
  private readonly frozenParts: string[] = [];
  private tailHtml = '';
  private length = 0;

  constructor(private readonly renderer: MarkdownRenderer) {}

  get source(): string {
    return this.frozenSource.join('') + this.open;
  }

  /** Characters streamed so far (`source.length`, without joining it). */
  get sourceLength(): number {
    return this.length;
  }

  /** Everything rendered so far, frozen and live. */
  get html(): string {
    return this.frozenParts.join('') + this.tailHtml;
  }

  append(chunk: string): StreamUpdate {
    this.open += chunk;
    this.length += chunk.length;
    const wasWhole = this.wholeDocument;
    const boundary = this.scan();
    if (this.wholeDocument) {
      // Once whole, nothing is frozen again: `open` is the whole reply from here on.
      if (!wasWhole) {
        const before = this.frozenSource.join('');
        this.open = before + this.open;
        this.scanEnd += before.length;
        this.frozenSource.length = 0;
        this.frozenParts.length = 0;
      }
      this.tailHtml = this.renderer.render(this.open);
      return { reset: !wasWhole, frozenHtml: '', tailHtml: this.tailHtml };
    }
    let frozenHtml = '';
    if (boundary > 0) {
      const frozen = this.open.slice(0, boundary);
      frozenHtml = this.renderer.render(frozen);
      this.frozenParts.push(frozenHtml);
      this.frozenSource.push(frozen);
      this.open = this.open.slice(boundary);
      this.scanEnd -= boundary;
    }
    this.tailHtml = this.open.length > 0 ? this.renderer.render(this.open) : '';
    return { reset: false, frozenHtml, tailHtml: this.tailHtml };
  }

  /** Starts over with `text` (a final message that differs from the deltas). */
  replace(text: string): StreamUpdate {
    this.open = '';
    this.length = 0;
    this.scanEnd = 0;
    this.fence = null;
    this.afterBlankLine = false;
    this.wholeDocument = false;
    this.frozenSource.length = 0;
    this.frozenParts.length = 0;
    this.tailHtml = '';
    return { ...this.append(text), reset: true };
  }

  /** Scans the new complete lines of `open`; returns the last safe boundary found in it, or -1. */
  private scan(): number {
    let boundary = -1;
    let lineStart = this.scanEnd;
    const text = this.open;
    for (let newline = text.indexOf('\n', lineStart); newline >= 0; newline = text.indexOf('\n', lineStart)) {
      if (this.scanLine(text.slice(lineStart, newline).replace(/\r$/, ''), lineStart)) boundary = lineStart;
      lineStart = newline + 1;
    }
    this.scanEnd = lineStart;

    // The unfinished last line: its first character can already prove a boundary.
    const partial = text.slice(lineStart);
    if (partial) {
      if (!this.fence && REFERENCE_DEFINITION.test(partial)) this.wholeDocument = true;
      if (this.afterBlankLine && !this.fence && lineStart > 0 && NEW_BLOCK_START.test(partial)) {
        boundary = lineStart;
      }
    }
    return boundary;
  }

  /** Advances the fence and blank-line state by one complete line; true if a safe boundary starts it. */
  private scanLine(line: string, start: number): boolean {
    if (this.fence) {
      const closing = new RegExp(`^\\s*\\${this.fence.char}{${this.fence.length},}\\s*$`);
      if (closing.test(line)) this.fence = null;
      this.afterBlankLine = false;
      return false;
    }
    if (line.trim() === '') {
      this.afterBlankLine = true;
      return false;
    }
    const safe = this.afterBlankLine && start > 0 && !/^\s/.test(line) && !LIST_ITEM.test(line) && !REFERENCE_DEFINITION.test(line);
    this.afterBlankLine = false;
    if (REFERENCE_DEFINITION.test(line)) this.wholeDocument = true;
    const fence = FENCE_OPEN.exec(line);
    // A backtick "fence" whose info string has a backtick is inline code, not a fence.
    if (fence && !(fence[1][0] === '`' && fence[2].includes('`'))) {
      this.fence = { char: fence[1][0], length: fence[1].length };
    }
    return safe;
  }
}
