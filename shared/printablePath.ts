/**
 * File names as tool answers and the panel show them. A name is repository
 * input: one holding a newline, a control character, a bidi override or a
 * `:12:` can pose as another result line (`a.txt\nauth.ts:12: const
 * ADMIN_PASSWORD…` read as a grep match) or render as another name. Such a
 * name is shown as a JSON string with every such character escaped
 * (`"a.txt\nauth.ts:12: …"`); ordinary names are shown as they are. A quoted
 * form is accepted back as a path argument (see ReadBoundary.resolve).
 *
 * No Node imports: the webview bundle uses this module too.
 */

/**
 * C0 controls, DEL, C1 controls (NEL among them), the Arabic letter mark,
 * LRM/RLM, the line and paragraph separators, and the bidi embeddings,
 * overrides and isolates.
 */
const UNSAFE_BEYOND_C0 = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const UNSAFE_CHARACTER = new RegExp(`[\\u0000-\\u001f${UNSAFE_BEYOND_C0}]`);
const UNSAFE_CHARACTERS = new RegExp(UNSAFE_CHARACTER.source, 'g');
/** The same without newline and tab, for text whose lines are meant to stay lines. */
const UNSAFE_IN_LINES = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${UNSAFE_BEYOND_C0}]`, 'g');
/**
 * grep answers `path:line: text`: a name holding `:12:` (or ending in `:12`,
 * which the separator completes) could be split at the wrong colon.
 */
const LINE_NUMBER_SEPARATOR = /:\d+(?::|$)/;

/** Whether a name must be shown quoted: it holds an unsafe character or a line-number separator, or starts like a quoted form. */
export function needsQuoting(name: string): boolean {
  return UNSAFE_CHARACTER.test(name) || LINE_NUMBER_SEPARATOR.test(name) || name.startsWith('"');
}

function unicodeEscape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` as a JSON string literal in which no unsafe character is left raw
 * (JSON.stringify escapes C0 controls but leaves DEL, C1, U+2028 and the bidi
 * controls as they are).
 */
export function quoteAsJson(text: string): string {
  return JSON.stringify(text).replace(UNSAFE_CHARACTERS, unicodeEscape);
}

/** A root-relative path (or a single name) as tool answers show it: unchanged unless it needs quoting. */
export function printablePath(relativePath: string): string {
  return needsQuoting(relativePath) ? quoteAsJson(relativePath) : relativePath;
}

/** A name in a comma-separated list (the summary's top level, grep's skipped files): also quoted when it holds a comma. */
export function printableListItem(name: string): string {
  return needsQuoting(name) || name.includes(',') ? quoteAsJson(name) : name;
}

/**
 * A path inside a message that already puts it in double quotes: as is when
 * that is unambiguous, else JSON-escaped (a `"` or `\` in the name would
 * otherwise read as part of an escape).
 */
export function quotedPath(text: string): string {
  return needsQuoting(text) || text.includes('"') || text.includes('\\') ? quoteAsJson(text) : `"${text}"`;
}

/**
 * The name a quoted form stands for (`"a\nb.txt"` → a, newline, b.txt), or
 * undefined when `text` is not one. A trailing `/` after the closing quote is
 * kept, as list_dir prints directories (`"a\nb"/`).
 */
export function parseQuotedPath(text: string): string | undefined {
  const directory = text.endsWith('"/');
  const literal = directory ? text.slice(0, -1) : text;
  if (literal.length < 2 || !literal.startsWith('"') || !literal.endsWith('"')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(literal);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'string') return undefined;
  return directory ? `${parsed}/` : parsed;
}

/**
 * Multi-line text (a tool answer's preview) made inert for display: newlines
 * and tabs stay, every other unsafe character is shown as its `\uXXXX`
 * escape, so a bidi override or a stray carriage return cannot reorder or
 * rewrite what is around it.
 */
export function inertText(text: string): string {
  return text.replace(UNSAFE_IN_LINES, unicodeEscape);
}

/** One line made inert for display: every unsafe character escaped, newlines and tabs included. */
export function inertLine(text: string): string {
  return text.replace(UNSAFE_CHARACTERS, unicodeEscape);
}

/** Besides `\n`, what some reader (a terminal, an editor, a renderer) may take for the end of a line. */
const LINE_BREAKS = /[\r\u000b\u000c\u0085\u2028\u2029]/g;

/**
 * One line of file content inside a one-line result (grep's `path:line:
 * text`): a carriage return or U+2028 in it could otherwise start what reads
 * as a new result line.
 */
export function escapeLineBreaks(line: string): string {
  return line.replace(LINE_BREAKS, (character) => (character === '\r' ? '\\r' : unicodeEscape(character)));
}
