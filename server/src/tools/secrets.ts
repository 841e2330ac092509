import { Minimatch } from 'minimatch';
import { quotedPath } from './printablePath';

/**
 * Which paths the read tools never show the contents of. Default rules cover
 * files that commonly hold credentials; a project policy or user settings can
 * add globs, never remove rules.
 *
 * Every check takes a path relative to the folder root with `/` separators.
 */

export type ReadDenialKind = 'secret' | 'git' | 'policy';

export interface ReadDenial {
  kind: ReadDenialKind;
  /** The rule that matched, for the refusal message. */
  rule: string;
}

/** `.env.*` files with these last suffixes are templates without real values. */
const ENV_TEMPLATE_SUFFIXES = new Set(['example', 'sample', 'template', 'dist', 'defaults']);

const EXACT_SECRET_NAMES = new Set(['.npmrc', '.netrc', '.pypirc']);

/**
 * The default rules as case-insensitive name globs, for tools that filter by
 * glob (ripgrep). `.env.*` is left out because its template exception cannot
 * be written as a glob; callers must still check every path with
 * `ReadDenyRules`, which is the rule itself.
 */
export const SECRET_NAME_GLOBS: readonly string[] = ['.env', '*.pem', '*.key', 'id_rsa*', 'id_ed25519*', '.npmrc', '.netrc', '.pypirc'];

/** The default secret rule a single path segment matches, if any. */
function defaultSecretRule(segment: string): string | undefined {
  // Lower-cased so `.ENV` on a case-insensitive file system is still refused.
  const name = segment.toLowerCase();
  if (name === '.env') return '.env';
  if (name.startsWith('.env.')) {
    const lastSuffix = name.slice(name.lastIndexOf('.') + 1);
    return ENV_TEMPLATE_SUFFIXES.has(lastSuffix) ? undefined : '.env.*';
  }
  if (name.endsWith('.pem')) return '*.pem';
  if (name.endsWith('.key')) return '*.key';
  if (name.startsWith('id_rsa')) return 'id_rsa*';
  if (name.startsWith('id_ed25519')) return 'id_ed25519*';
  if (EXACT_SECRET_NAMES.has(name)) return name;
  return undefined;
}

function denialOfSegment(segment: string): ReadDenial | undefined {
  // `.git/` holds remotes with embedded tokens, hooks and the whole history.
  if (segment.toLowerCase() === '.git') return { kind: 'git', rule: '.git/' };
  const rule = defaultSecretRule(segment);
  return rule ? { kind: 'secret', rule } : undefined;
}

/** Normalizes a user-written deny glob to the form matched against root-relative paths. */
export function normalizeDenyGlob(glob: string): string {
  let normalized = glob.trim().replace(/\\/g, '/');
  while (normalized.startsWith('./')) normalized = normalized.slice(2);
  // A leading `/` means "anchored at the root" (gitignore habit), not the file system root.
  while (normalized.startsWith('/')) normalized = normalized.slice(1);
  // A trailing `/` means "this directory": the ancestor check below denies everything under it.
  while (normalized.endsWith('/') && normalized.length > 1) normalized = normalized.slice(0, -1);
  return normalized;
}

interface CompiledGlob {
  source: string;
  matcher: Minimatch;
}

export class ReadDenyRules {
  private readonly globs: CompiledGlob[];

  constructor(denyReadGlobs: readonly string[] = []) {
    this.globs = denyReadGlobs
      .map((glob) => normalizeDenyGlob(glob))
      .filter((glob) => glob.length > 0)
      .map((glob) => ({
        source: glob,
        // nocase and matchBase only ever deny more; nonegate keeps `!x` from meaning "everything but x".
        matcher: new Minimatch(glob, { dot: true, nocase: true, matchBase: !glob.includes('/'), nonegate: true, nocomment: true }),
      }));
  }

  /** The policy and settings globs, normalized (relative to the root, no leading `./` or `/`). */
  get policyGlobs(): readonly string[] {
    return this.globs.map((glob) => glob.source);
  }

  /**
   * Denial for a path requested directly: the path itself or any directory
   * above it may be denied (`secrets/` denies `secrets/a/b.txt`).
   */
  denialOf(relativePath: string): ReadDenial | undefined {
    const segments = relativePath.split('/').filter((segment) => segment !== '' && segment !== '.');
    let prefix = '';
    for (const segment of segments) {
      prefix = prefix ? `${prefix}/${segment}` : segment;
      const denial = denialOfSegment(segment) ?? this.policyDenialOf(prefix);
      if (denial) return denial;
    }
    return undefined;
  }

  /**
   * Denial for one entry met during a walk, whose parent directories were
   * already checked on the way down (keeps walks linear).
   */
  entryDenialOf(relativePath: string): ReadDenial | undefined {
    const slash = relativePath.lastIndexOf('/');
    const name = slash < 0 ? relativePath : relativePath.slice(slash + 1);
    return denialOfSegment(name) ?? this.policyDenialOf(relativePath);
  }

  private policyDenialOf(relativePath: string): ReadDenial | undefined {
    for (const glob of this.globs) {
      // `dir/**` does not match `dir` itself but does match `dir/`.
      if (glob.matcher.match(relativePath) || glob.matcher.match(`${relativePath}/`)) {
        return { kind: 'policy', rule: glob.source };
      }
    }
    return undefined;
  }
}

/** A short refusal telling the model why and what it can do instead. */
export function describeDenial(displayPath: string, denial: ReadDenial): string {
  switch (denial.kind) {
    case 'git':
      return `Refused: ${quotedPath(displayPath)} is inside .git/, Git's internal data, which is not readable here. Read the working-tree files instead.`;
    case 'secret':
      return `Refused: ${quotedPath(displayPath)} may hold credentials (default rule ${quotedPath(denial.rule)}), so its contents are never shown. Read a template such as .env.example instead, or ask the user what you need to know about it.`;
    case 'policy':
      return `Refused: ${quotedPath(displayPath)} is denied by this project's policy (.repo-discuss/policy.json) or the user's settings (rule ${quotedPath(denial.rule)}). Work from other files, or ask the user about it.`;
  }
}
