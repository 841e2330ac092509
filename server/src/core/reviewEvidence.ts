import { unquoteGitPath } from '../git/diffFilter';

/**
 * What a review may cite: the files of the diff it was shown, and in each the
 * lines its hunks cover (the new side; the old side for a deleted file). The
 * model's `path:line` evidence is checked against this, so a place the diff
 * does not show (a path outside the folder, a file the change never touched,
 * a line past the hunks, a header forged inside a file's added lines) never
 * reaches the checklist as evidence.
 */
export class DiffPlaces {
  /** Per file, the line ranges its hunks cover. */
  private readonly files = new Map<string, Array<[number, number]>>();

  constructor(diff: string) {
    let current: Array<[number, number]> | undefined;
    /** The file was deleted: its old lines are the ones to cite. */
    let deleted = false;
    let oldPath: string | undefined;
    let oldLeft = 0;
    let newLeft = 0;
    for (const line of diff.split('\n')) {
      // Inside a hunk every line is content, however it looks: an added line
      // reading "++ b/../../etc/passwd" shows as "+++ b/../../etc/passwd" and
      // must not open a file.
      if (oldLeft > 0 || newLeft > 0) {
        const mark = line[0];
        if (mark === ' ' || line === '') {
          oldLeft--;
          newLeft--;
        } else if (mark === '-') oldLeft--;
        else if (mark === '+') newLeft--;
        else if (mark !== '\\') oldLeft = newLeft = 0;
        continue;
      }
      if (line.startsWith('--- ')) {
        oldPath = sidePath(line.slice(4), 'a/');
        continue;
      }
      if (line.startsWith('+++ ')) {
        const newPath = sidePath(line.slice(4), 'b/');
        const path = newPath ?? oldPath;
        current = undefined;
        deleted = newPath === undefined;
        if (path) {
          current = this.files.get(path) ?? [];
          this.files.set(path, current);
        }
        continue;
      }
      const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (hunk && current) {
        const oldStart = Number(hunk[1]);
        const oldCount = hunk[2] === undefined ? 1 : Number(hunk[2]);
        const newStart = Number(hunk[3]);
        const newCount = hunk[4] === undefined ? 1 : Number(hunk[4]);
        const [start, count] = deleted ? [oldStart, oldCount] : [newStart, newCount];
        // A hunk that only removes lines is cited at the line it removed them after.
        current.push([Math.max(1, start), Math.max(1, start) + Math.max(0, count - 1)]);
        oldLeft = oldCount;
        newLeft = newCount;
      }
    }
  }

  get fileCount(): number {
    return this.files.size;
  }

  /** Whether `evidence` (`path`, `path:line` or `path:start-end`) names a file of the diff and, with a line, a line its hunks cover. */
  covers(evidence: string): boolean {
    const match = /^(.*?)(?::(\d+)(?:-(\d+))?)?$/.exec(evidence.trim());
    if (!match) return false;
    let path = match[1].trim().replace(/^\.\//, '');
    if (!this.files.has(path) && /^[ab]\//.test(path)) path = path.slice(2);
    // Never a place outside the folder, whatever a diff could be made to say.
    if (!path || path.startsWith('/') || /^[A-Za-z]:/.test(path) || path.split(/[\\/]/).includes('..')) return false;
    const ranges = this.files.get(path);
    if (!ranges) return false;
    if (match[2] === undefined) return true;
    const line = Number(match[2]);
    return ranges.some(([start, end]) => line >= start && line <= end);
  }
}

/** A `--- a/x` / `+++ b/x` path, decoded when git quoted it; undefined for /dev/null. */
function sidePath(raw: string, prefix: string): string | undefined {
  const text = raw.replace(/\t.*$/, '');
  if (text === '/dev/null') return undefined;
  const decoded = unquoteGitPath(text);
  if (decoded === undefined) return undefined;
  return decoded.startsWith(prefix) ? decoded.slice(prefix.length) : decoded;
}
