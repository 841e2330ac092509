/**
 * Untrusted text (the model's, a file name, a line of a file) in a Markdown
 * file we write: the export and the task file. Whatever it holds, it must
 * stay text where it is put: no line of it may read as a heading or entry of
 * ours, close a code span or fence of ours, hide what follows (an HTML
 * comment, an unclosed fence), or load anything remote (an image, raw HTML)
 * when the file is rendered. Ordinary text comes out as it went in.
 *
 * Shared: the server writes the export, the clients the task file.
 */
import { oneLine } from './oneLine';
import { inertLine, inertText } from './printablePath';

/**
 * `text` as one inline code span: every control character escaped (line
 * breaks included), between backtick fences longer than any backtick run
 * inside, so nothing in it can close the span (CommonMark's rule).
 */
export function codeSpan(text: string): string {
  const inner = inertLine(text);
  if (inner === '') return '` `';
  const longest = Math.max(0, ...(inner.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  // A backtick at either end would join the fence; a space at both ends would be stripped. One space each side is stripped again.
  const pad = /^[` ]|[` ]$/.test(inner) ? ' ' : '';
  return `${fence}${pad}${inner}${pad}${fence}`;
}

/**
 * Marks that open a block at the start of a line (after the markers of the
 * lists and quotes it may sit in): an ATX heading, a setext underline, a code
 * fence. The first two can pose as a heading of ours; a fence left open hides
 * everything after it.
 */
const CONTAINER_MARKS = /^(?:[ \t>]|[-*+][ \t]|\d{1,9}[.)][ \t])*/;
// A backtick fence's info string holds no backtick (CommonMark): "```npm install```" is a code span, not a fence, and taken
// for one it swallowed the text after it and dropped its own.
const BLOCK_OPENER = new RegExp(`${CONTAINER_MARKS.source}(?:#{1,6}(?:[ \\t]|$)|\`{3,}[^\`]*$|~{3,}|[=-]+[ \\t]*$)`);
const FENCE_OPENER = new RegExp(`^(${CONTAINER_MARKS.source.slice(1)})(\`{3,}(?=[^\`]*$)|~{3,})(.*)$`);

/**
 * Untrusted text of one line inside a line of ours (a list item, a title): on
 * one line, every control character escaped, images, raw HTML and stray
 * backticks made literal (see `inertInline`), and a leading mark that would
 * open a block (a heading's `#`, a quote's `>`, a list marker, a fence)
 * escaped.
 */
export function inlineMarkdown(text: string): string {
  const line = inertInline(inertLine(oneLine(text)));
  // Not a backtick: a run that opens a code span is kept whole, and a fence's info string cannot hold its closing run.
  return line.replace(/^(?:#(?=#{0,5}(?:[ \t]|$))|>|[-+*](?=[ \t]|$)|~(?=~~)|\d{1,9}(?=[.)](?:[ \t]|$)))/, (mark) =>
    /\d/.test(mark) ? `${mark}\\` : `\\${mark}`,
  );
}

/**
 * Untrusted text of several lines as a block of a Markdown file, between our
 * own lines. Each line keeps its Markdown but loses images and raw HTML (see
 * `inertInline`). Text with a heading, a setext underline or a code fence is
 * written as a blockquote, every line behind a `>`, so none of its lines can
 * read as a heading of ours or reach past it; a fence in it is written again
 * as one that nothing inside can close, and that the quote closes.
 */
export function markdownBlock(text: string): string {
  const lines = text.split(/\r\n|\r|\n/).map(inertText);
  if (!lines.some((line) => BLOCK_OPENER.test(line))) return lines.map(inertInline).join('\n');
  const quoted: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const opener = FENCE_OPENER.exec(lines[i]);
    if (!opener) {
      quoted.push(inertInline(lines[i]));
      continue;
    }
    const [, prefix, marker, info] = opener;
    const blank = prefix.replace(/[^\t]/g, ' ');
    // At most three spaces before a closing fence, after the block's own prefix: one indented further is content.
    const closing = new RegExp(`^(?:${escapeRegExp(prefix)}|${escapeRegExp(blank)})? {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
    const content: string[] = [];
    for (i++; i < lines.length && !closing.test(lines[i]); i++) {
      const line = lines[i];
      content.push(line.startsWith(prefix) ? line.slice(prefix.length) : line.startsWith(blank) ? line.slice(blank.length) : line);
    }
    const longest = Math.max(2, ...content.flatMap((line) => line.match(/`+/g) ?? []).map((run) => run.length));
    const fence = '`'.repeat(longest + 1);
    const language = /^[\w.+#-]+$/.test(info.trim()) ? info.trim() : '';
    quoted.push(`${fence}${language}`, ...content, fence);
  }
  return quoted.map((line) => (line ? `> ${line}` : '>')).join('\n');
}

/**
 * One line of Markdown with nothing in it that loads or hides: an image's
 * `!` is escaped (it reads as a plain link, as the panel shows images), as is
 * the `<` of raw HTML (a tag, a comment, an autolink). Code spans are kept
 * as they are when they close on the same line; a backtick run that does not
 * is escaped, so no code span runs on past the line and the spans of the
 * written line are exactly those seen here.
 */
export function inertInline(line: string): string {
  let out = '';
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === '\\') {
      // An escape pair stays as it is; an escaped backtick's run is escaped whole below.
      out += line.slice(i, i + 2);
      i += 2;
      if (line[i - 1] === '`') {
        const rest = /^`*/.exec(line.slice(i))![0];
        out += '\\`'.repeat(rest.length);
        i += rest.length;
      }
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(line.slice(i))![0];
      const close = closingRun(line, i + run.length, run.length);
      if (close === undefined) {
        out += '\\`'.repeat(run.length);
        i += run.length;
      } else {
        out += line.slice(i, close);
        i = close;
      }
      continue;
    }
    if ((c === '!' && line[i + 1] === '[') || (c === '<' && /[A-Za-z/!?]/.test(line[i + 1] ?? ''))) out += '\\';
    out += c;
    i++;
  }
  return out;
}

/** The end of the next run of exactly `length` backticks from `from` (a backslash escapes nothing inside a code span), if any. */
function closingRun(line: string, from: number, length: number): number | undefined {
  const runs = /`+/g;
  runs.lastIndex = from;
  for (let run = runs.exec(line); run; run = runs.exec(line)) {
    if (run[0].length === length) return run.index + length;
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
