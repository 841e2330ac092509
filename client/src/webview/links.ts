/**
 * Repository paths the model cites: `src/a.ts`, `src/a.ts:42`,
 * `src/a.ts#L42-L50`, `./x/y.py:3:5`. Pure string work, shared by the
 * Markdown renderer and its tests.
 *
 * Only relative paths that stay inside the folder survive (or absolute ones
 * under the known repository root, made relative). The extension checks the
 * path again before opening anything; this module only decides what is worth
 * showing as a link.
 */

import { printablePath } from '../../../shared/printablePath';

export interface RepoPathRef {
  /** Relative to the repository root, `/`-separated, no `.` or `..` segments. */
  path: string;
  line?: number;
  endLine?: number;
}

export interface RepoPathMatch extends RepoPathRef {
  /** Offsets of the cited text (path and line suffix) in the searched string. */
  start: number;
  end: number;
}

export interface RepoPathOptions {
  /** Absolute path of the repository; absolute citations under it become relative. */
  repoRoot?: string;
}

/**
 * Extensions a bare file name (no `/`) needs before inline code counts as a
 * citation: `console.log` or `obj.method` must not become links.
 */
const KNOWN_EXTENSIONS = new Set([
  'ts', 'tsx', 'mts', 'cts', 'js', 'jsx', 'mjs', 'cjs', 'json', 'jsonc', 'md', 'mdx', 'markdown', 'rst', 'txt',
  'py', 'pyi', 'rs', 'go', 'java', 'kt', 'kts', 'scala', 'groovy', 'gradle', 'c', 'h', 'cc', 'cpp', 'cxx', 'hpp',
  'hh', 'cs', 'fs', 'vb', 'rb', 'php', 'swift', 'm', 'mm', 'dart', 'lua', 'pl', 'pm', 'r', 'jl', 'ex', 'exs',
  'erl', 'hs', 'ml', 'mli', 'clj', 'elm', 'zig', 'nim', 'sh', 'bash', 'zsh', 'fish', 'ps1', 'bat', 'cmd',
  'yml', 'yaml', 'toml', 'ini', 'cfg', 'conf', 'xml', 'html', 'htm', 'css', 'scss', 'sass', 'less', 'vue',
  'svelte', 'astro', 'sql', 'graphql', 'gql', 'proto', 'lock', 'csv', 'tsv', 'env', 'properties', 'tf', 'hcl',
  'cmake', 'mk', 'dockerfile', 'ipynb', 'svg', 'tex', 'bzl', 'nix', 'sol', 'prisma',
]);

/** Extensionless names that are files in practically every repository that has them. */
const KNOWN_FILE_NAMES = new Set([
  'makefile', 'dockerfile', 'containerfile', 'license', 'licence', 'readme', 'changelog', 'contributing',
  'gemfile', 'rakefile', 'procfile', 'jenkinsfile', 'vagrantfile', 'brewfile', 'codeowners', 'justfile',
  '.gitignore', '.gitattributes', '.gitmodules', '.dockerignore', '.editorconfig', '.npmrc', '.nvmrc',
  '.yarnrc', '.prettierrc', '.eslintrc', '.babelrc', '.env', '.envrc', '.vscodeignore', '.npmignore',
]);

// One path segment: what file names in repositories are made of. Spaces and
// quotes are left out on purpose: prose around a path must not be swallowed.
const SEGMENT = String.raw`[\w.\-@+~]+`;
// The last one never ends in a dot: `see src/a.ts.` ends a sentence.
const LAST_SEGMENT = String.raw`[\w.\-@+~]*[\w\-@+~]`;
const LINE_SUFFIX = String.raw`(?::(\d{1,7})(?::\d{1,5})?(?:-(\d{1,7}))?|#L(\d{1,7})(?:C\d{1,5})?(?:-L?(\d{1,7})(?:C\d{1,5})?)?)`;

/**
 * A path in running text: optional root (`./`, `/`, a drive), segments, then
 * the line suffix. The lookbehind keeps matches from starting inside a word,
 * a URL (`https://host/a.ts` is never read as `host/a.ts`) or a longer path.
 */
const PATH_IN_TEXT = new RegExp(
  String.raw`(?<![\w.\-@+~/\\:])((?:[A-Za-z]:)?(?:\.{1,2}/|/)?(?:${SEGMENT}/)*${LAST_SEGMENT})${LINE_SUFFIX}?(?![\w\-@+~/\\]|:\d)`,
  'g',
);

const WHOLE_PATH = new RegExp(`^${PATH_IN_TEXT.source}$`);
const LINE_SUFFIX_AT_END = new RegExp(`${LINE_SUFFIX}$`);
const URL_SCHEME = /^[a-z][a-z0-9+.\-]*:/i;
const WINDOWS_DRIVE = /^[a-z]:\//i;
const WEB_HOST = /^(?:www\.|[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|edu|gov|co|ai)$)/i;

/**
 * A link target or other explicit reference read as a repository path, or
 * undefined when it is not one (a URL, an escape from the folder, an absolute
 * path elsewhere). Lenient about shape: `docs/guide` is accepted here because
 * someone deliberately linked it.
 */
export function parseRepoPath(target: string, options: RepoPathOptions = {}): RepoPathRef | undefined {
  let text = target.trim();
  if (!text || text.length > 1024 || /[\u0000-\u001f\u007f]/.test(text)) return undefined;

  let line: number | undefined;
  let endLine: number | undefined;
  const suffix = LINE_SUFFIX_AT_END.exec(text);
  if (suffix && suffix.index > 0) {
    line = toLineNumber(suffix[1] ?? suffix[3]);
    endLine = toLineNumber(suffix[2] ?? suffix[4]);
    text = text.slice(0, suffix.index);
  }

  text = text.replace(/\\/g, '/');
  if (text.startsWith('//')) return undefined;
  const isAbsolute = text.startsWith('/') || WINDOWS_DRIVE.test(text);
  // Checked after the line suffix is gone, so `a.ts:42` is not taken for a scheme.
  if (!isAbsolute && URL_SCHEME.test(text)) return undefined;

  let relative: string;
  if (isAbsolute) {
    const inside = relativeToRoot(text, options.repoRoot);
    if (inside === undefined) return undefined;
    relative = inside;
  } else {
    relative = text;
  }

  const path = normalizeInside(relative);
  if (!path) return undefined;
  const ref: RepoPathRef = { path };
  if (line !== undefined) ref.line = line;
  if (line !== undefined && endLine !== undefined && endLine >= line) ref.endLine = endLine;
  return ref;
}

/**
 * Inline code read as a citation: the whole span must be one path that looks
 * like a file, so `npm test`, `console.log` or `a/b` stay code.
 */
export function parseCitedPath(code: string, options: RepoPathOptions = {}): RepoPathRef | undefined {
  const text = code.trim();
  const match = WHOLE_PATH.exec(text);
  if (!match) return undefined;
  const hasLineSuffix = match[2] !== undefined || match[4] !== undefined;
  if (!looksLikeFile(match[1], { bareNeedsKnownExtension: !hasLineSuffix })) return undefined;
  return parseRepoPath(text, options);
}

/**
 * Paths cited in running text, in order. Prose is ambiguous (`and/or`,
 * `Node.js`), so a path here needs a `/` or a line suffix, and a file name
 * that looks like one.
 */
export function findRepoPaths(text: string, options: RepoPathOptions = {}): RepoPathMatch[] {
  const found: RepoPathMatch[] = [];
  // Cheap exit for the common case of a sentence with no path in it.
  if (!/[/:#]/.test(text)) return found;
  for (const match of text.matchAll(PATH_IN_TEXT)) {
    const pathText = match[1];
    const hasLineSuffix = match[2] !== undefined || match[4] !== undefined;
    if (!pathText.includes('/') && !hasLineSuffix) continue;
    if (!looksLikeFile(pathText, { bareNeedsKnownExtension: !pathText.includes('/') })) continue;
    const ref = parseRepoPath(match[0], options);
    if (!ref) continue;
    const start = match.index ?? 0;
    found.push({ ...ref, start, end: start + match[0].length });
  }
  return found;
}

/**
 * `src/a.ts:42-50` as people read it; the inverse of the parsers, for titles.
 * A path holding a bidi or control character is shown quoted and escaped, so
 * the title says where the link goes.
 */
export function formatRepoPath(ref: RepoPathRef): string {
  const shown = printablePath(ref.path);
  if (ref.line === undefined) return shown;
  return ref.endLine !== undefined && ref.endLine !== ref.line
    ? `${shown}:${ref.line}-${ref.endLine}`
    : `${shown}:${ref.line}`;
}

function looksLikeFile(pathText: string, rules: { bareNeedsKnownExtension: boolean }): boolean {
  const normalized = pathText.replace(/\\/g, '/');
  const segments = normalized.split('/').filter(Boolean);
  const name = segments[segments.length - 1] ?? '';
  const first = segments[0] ?? '';
  if (segments.length > 1 && WEB_HOST.test(first)) return false;
  if (/^\.+$/.test(name)) return false;

  const lower = name.toLowerCase();
  if (KNOWN_FILE_NAMES.has(lower)) return true;
  // A dotfile inside a folder (`config/.env.local`) is a file; a bare `.then`
  // or `.length` in code is a property, so bare ones need the list above.
  if (/^\.[a-z][\w.-]*$/i.test(name) && segments.length > 1) return true;
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || dot === name.length - 1) return false;
  const extension = lower.slice(dot + 1);
  // An extension has a letter in it: `1.2/3.4` is a version, not a file.
  if (!/^[a-z0-9]{1,10}$/.test(extension) || !/[a-z]/.test(extension)) return false;
  if (rules.bareNeedsKnownExtension && segments.length === 1) return KNOWN_EXTENSIONS.has(extension);
  return true;
}

function toLineNumber(digits: string | undefined): number | undefined {
  if (digits === undefined) return undefined;
  const value = Number(digits);
  return Number.isSafeInteger(value) && value >= 1 ? value : undefined;
}

/** The part of `absolute` under `root`, or undefined when it is elsewhere (or no root is known). */
function relativeToRoot(absolute: string, root: string | undefined): string | undefined {
  if (!root) return undefined;
  const rootText = root.replace(/\\/g, '/').replace(/\/+$/, '');
  if (!rootText) return undefined;
  // Drive letters compare case-insensitively; the rest as typed (the extension re-checks).
  const sameDrive = (a: string, b: string) =>
    WINDOWS_DRIVE.test(a) ? a.slice(0, 1).toLowerCase() + a.slice(1) === b.slice(0, 1).toLowerCase() + b.slice(1) : a === b;
  const head = absolute.slice(0, rootText.length);
  if (!sameDrive(head, rootText) || absolute[rootText.length] !== '/') return undefined;
  return absolute.slice(rootText.length + 1);
}

/** Resolves `.` and `..`; undefined when the path climbs out of the folder or is empty. */
function normalizeInside(relative: string): string | undefined {
  const kept: string[] = [];
  for (const segment of relative.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (kept.length === 0) return undefined;
      kept.pop();
      continue;
    }
    kept.push(segment);
  }
  return kept.length > 0 ? kept.join('/') : undefined;
}
