/**
 * Markdown for a terminal: `marked` with `marked-terminal` (headings, lists,
 * highlighted code), wrapped at word boundaries to the terminal's width, and
 * links shown as plain `path:line`.
 *
 * The model's text is untrusted: it is made inert before the renderer sees
 * it (so no control character goes in), so is each token's text after the
 * lexer decoded its character references, and what comes out keeps only SGR colour codes
 * (TerminalText.fromRenderer), so the renderer is no way around inertText.ts.
 */
import { TerminalText, inert } from './inertText';

export interface MarkdownRenderer {
  /** `source` (untrusted Markdown) rendered for a terminal `columns` wide. */
  render(source: string, columns: number): TerminalText;
}

/** marked and marked-terminal are ES modules: this CommonJS build reaches them through `import()`, which tsc keeps as is. */
export async function loadMarkdownRenderer(): Promise<MarkdownRenderer> {
  const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
  const byWidth = new Map<number, InstanceType<typeof Marked<string, string>>>();
  const parserFor = (columns: number) => {
    let marked = byWidth.get(columns);
    if (!marked) {
      marked = new Marked<string, string>({ gfm: true, async: false });
      // Wrapping is done after rendering (wrapLines), where indentation and list markers are known.
      // @types/marked-terminal describes an older release; this one returns a marked extension.
      marked.use(markedTerminal({ width: columns, reflowText: false, showSectionPrefix: false, emoji: false, tab: 2 }) as unknown as Parameters<typeof marked.use>[0]);
      marked.use({
        // The lexer decodes character references in text (`&#27;` is an ESC again, after the source was made
        // inert, and `&#27;[8m` would pass for a colour code of the renderer's): each token's text is made inert once more.
        walkTokens(token) {
          const fields = token as unknown as Record<string, unknown>;
          for (const key of ['text', 'href', 'title', 'lang']) if (typeof fields[key] === 'string') fields[key] = inert(fields[key] as string);
        },
        renderer: {
          // marked-terminal 7 prints a list item's text token raw; its inline tokens (code, emphasis) need parsing.
          text(token) {
            return 'tokens' in token && token.tokens ? this.parser.parseInline(token.tokens) : false;
          },
          // No OSC 8 hyperlink and no bare URL after the text: a path link reads as `path:line`.
          link(token) {
            const text = String(this.parser.parseInline(token.tokens));
            const target = plainTarget(token.href);
            const shown = stripSgr(text);
            return shown === target || shown === token.href || !target ? text : `${text} (${target})`;
          },
        },
      });
      byWidth.set(columns, marked);
    }
    return marked;
  };
  return {
    render(source, columns) {
      const rendered = parserFor(columns).parse(inert(source)) as string;
      return TerminalText.fromRenderer(wrapLines(rendered.replace(/\n+$/, '\n'), columns));
    },
  };
}

/** A link's target as a reader wants it: `src/a.ts#L12-L20` as `src/a.ts:12-20`, a URL as it is. */
function plainTarget(href: string): string {
  const anchored = /^([^#?]+)#L(\d+)(?:-L?(\d+))?$/.exec(href);
  if (anchored && !/^[a-z][a-z0-9+.-]*:/i.test(href)) return `${decodeSafely(anchored[1])}:${anchored[2]}${anchored[3] ? `-${anchored[3]}` : ''}`;
  return /^[a-z][a-z0-9+.-]*:/i.test(href) ? href : decodeSafely(href);
}

function decodeSafely(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

const SGR = /\x1b\[[0-9;]*m/g;

export function stripSgr(text: string): string {
  return text.replace(SGR, '');
}

/** Columns a character takes: two for East Asian wide characters and most emoji, none for combining marks. */
function charWidth(char: string): number {
  const code = char.codePointAt(0)!;
  if (/\p{Mn}|\p{Me}|\u200b|\u200d|\ufe0f/u.test(char)) return 0;
  if (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  ) {
    return 2;
  }
  return 1;
}

/** Columns `text` takes on screen, colour codes aside. */
export function visibleWidth(text: string): number {
  let width = 0;
  for (const char of stripSgr(text)) width += charWidth(char);
  return width;
}

/** Each line of `text` wrapped to `columns` (see wrapLine). */
export function wrapLines(text: string, columns: number): string {
  return text
    .split('\n')
    .flatMap((line) => wrapLine(line, columns))
    .join('\n');
}

/**
 * One line broken at spaces so that no row is wider than `columns`, a word
 * cut only when it is wider than a row on its own. Continuation rows are
 * indented like the line's text (past its indentation and list marker), so a
 * wrapped list item stays under its bullet. Colour codes take no room and
 * are kept where they were.
 */
export function wrapLine(line: string, columns: number, hangingIndent?: number): string[] {
  if (columns < 8 || visibleWidth(line) <= columns) return [line];
  const plain = stripSgr(line);
  const lead = /^ *(?:(?:[*•-]|\d+\.) +)?/.exec(plain)![0].length;
  const hang = hangingIndent ?? (lead <= columns / 2 ? lead : 0);
  const rows: string[] = [];
  let row = '';
  let rowWidth = 0;
  let seen = 0;
  /** Where the last run of spaces starts in `row`, and the row's width before and after it. */
  let cut: { at: number; end: number; widthBefore: number; widthAfter: number } | undefined;
  let lastWasSpace = false;
  for (const part of line.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith('\x1b[')) {
      row += part;
      continue;
    }
    for (const char of part) {
      seen++;
      const width = charWidth(char);
      if (char === ' ' && seen > lead) {
        if (lastWasSpace && cut) {
          cut.end = row.length + 1;
          cut.widthAfter = rowWidth + 1;
        } else {
          cut = { at: row.length, end: row.length + 1, widthBefore: rowWidth, widthAfter: rowWidth + 1 };
        }
        lastWasSpace = true;
        row += char;
        rowWidth += width;
        continue;
      }
      lastWasSpace = false;
      while (rowWidth + width > columns && rowWidth > hang) {
        if (cut && cut.widthBefore > hang) {
          rows.push(row.slice(0, cut.at));
          row = ' '.repeat(hang) + row.slice(cut.end);
          rowWidth = hang + rowWidth - cut.widthAfter;
        } else {
          // A word wider than a row: cut it where the row ends.
          rows.push(row);
          row = ' '.repeat(hang);
          rowWidth = hang;
        }
        cut = undefined;
      }
      row += char;
      rowWidth += width;
    }
  }
  rows.push(cut && cut.end === row.length ? row.slice(0, cut.at) : row);
  return rows;
}
