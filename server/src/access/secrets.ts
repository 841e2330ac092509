import { compileGlob, CompiledGlob } from './globs';
import { quotedPath } from '../../../shared/printablePath';

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

/** One default rule: a file (or directory) name that commonly holds credentials. */
export interface DefaultSecretRule {
  /** How the rule is written in refusals and docs/secrets.md: a name, `*` standing for any characters. */
  readonly rule: string;
  /** Why files so named are refused. */
  readonly reason: string;
  /** Only in this directory (`.aws/credentials`); otherwise at any depth. */
  readonly parent?: string;
  /** Names the rule leaves readable although its pattern matches them (public keys, templates). */
  readonly except?: (name: string) => boolean;
}

/** `.env.*` files with these last suffixes are templates without real values. */
const ENV_TEMPLATE_SUFFIXES = new Set(['example', 'sample', 'template', 'dist', 'defaults']);
const isEnvTemplate = (name: string) => ENV_TEMPLATE_SUFFIXES.has(name.slice(name.lastIndexOf('.') + 1));
/** The public half of an SSH key pair is meant to be shared. */
const isPublicKey = (name: string) => name.endsWith('.pub');

const SSH_KEY_REASON = 'SSH private key, also with a suffix (`_sk`, a renamed copy); the `.pub` public key stays readable';

/**
 * The default rules, matched case-insensitively against each path segment
 * (so a matching directory is refused with everything under it), at any
 * depth. Listed with their reasons in docs/secrets.md, which a test keeps in
 * step with this list. Borderline names left out, and why, are listed there too.
 */
export const DEFAULT_SECRET_RULES: readonly DefaultSecretRule[] = [
  { rule: '.env', reason: 'dotenv file: the application\'s secrets as environment variables' },
  {
    rule: '.env.*',
    reason: 'per-environment dotenv file (`.env.local`, `.env.production`); templates ending in `.example`, `.sample`, `.template`, `.dist` or `.defaults` stay readable',
    except: isEnvTemplate,
  },
  { rule: '.envrc', reason: 'direnv file: exports secrets into the shell' },
  { rule: '*.pem', reason: 'PEM key or certificate bundle; private keys are usually kept as PEM' },
  { rule: '*.key', reason: 'private key (TLS, Rails `master.key`)' },
  { rule: '*.p12', reason: 'PKCS#12 bundle: a private key with its certificate' },
  { rule: '*.pfx', reason: 'PKCS#12 bundle (Windows name)' },
  { rule: '*.p8', reason: 'PKCS#8 private key (Apple `AuthKey_*.p8`)' },
  { rule: '*.jks', reason: 'Java keystore: private keys with their certificates' },
  { rule: '*.keystore', reason: 'Java or Android keystore (release signing keys)' },
  { rule: '*.ppk', reason: 'PuTTY private key' },
  { rule: '*.kdbx', reason: 'KeePass password database' },
  { rule: 'id_rsa*', reason: SSH_KEY_REASON, except: isPublicKey },
  { rule: 'id_dsa*', reason: SSH_KEY_REASON, except: isPublicKey },
  { rule: 'id_ecdsa*', reason: SSH_KEY_REASON, except: isPublicKey },
  { rule: 'id_ed25519*', reason: SSH_KEY_REASON, except: isPublicKey },
  { rule: '.git-credentials', reason: 'Git\'s credential store: tokens and passwords in plain text' },
  { rule: '.netrc', reason: 'logins and passwords per host (curl, Git, ftp)' },
  { rule: '_netrc', reason: '`.netrc` under its Windows name' },
  { rule: '.npmrc', reason: 'npm registry auth tokens' },
  { rule: '.pypirc', reason: 'PyPI upload credentials' },
  { rule: 'credentials', parent: '.gem', reason: 'RubyGems API key' },
  { rule: 'credentials', parent: '.cargo', reason: 'crates.io token (older name)' },
  { rule: 'credentials.toml', parent: '.cargo', reason: 'crates.io token' },
  { rule: '.pgpass', reason: 'PostgreSQL passwords' },
  { rule: '.my.cnf', reason: 'MySQL client password' },
  { rule: '.s3cfg', reason: 's3cmd access keys' },
  { rule: 'credentials', parent: '.aws', reason: 'AWS access keys' },
  { rule: 'config', parent: '.aws', reason: 'AWS CLI profiles, which may hold access keys too' },
  { rule: 'config.json', parent: '.docker', reason: 'Docker registry logins (`auths`)' },
  { rule: '.dockercfg', reason: 'Docker registry logins (older file)' },
  { rule: 'config', parent: '.kube', reason: 'Kubernetes cluster credentials (client keys, tokens)' },
  { rule: 'credentials.json', reason: 'Google API OAuth client or token file, as the Google quickstarts name it' },
  { rule: 'client_secret*.json', reason: 'Google OAuth client secret, as downloaded' },
  { rule: 'application_default_credentials.json', reason: 'gcloud application-default credentials (a refresh token)' },
  { rule: 'service-account*.json', reason: 'cloud service-account key (GCP key files renamed)' },
  { rule: 'service_account*.json', reason: 'cloud service-account key (GCP key files renamed)' },
  { rule: '.terraformrc', reason: 'Terraform CLI configuration: registry and Terraform Cloud tokens' },
  { rule: 'terraform.rc', reason: '`.terraformrc` under its Windows name' },
  { rule: 'credentials.tfrc.json', reason: 'tokens saved by `terraform login`' },
  { rule: '*.tfstate', reason: 'Terraform state: resource secrets (passwords, keys) in plain text' },
  { rule: '*.tfstate.backup', reason: 'Terraform state backup' },
  { rule: '*.tfvars', reason: 'Terraform variable values, often passwords (the Terraform `.gitignore` template excludes them)' },
  { rule: '*.tfvars.json', reason: 'Terraform variable values, JSON form' },
  { rule: '.vault-token', reason: 'HashiCorp Vault token' },
  { rule: '.htpasswd', reason: 'HTTP basic-auth password hashes' },
  { rule: 'secrets.yml', reason: 'Rails `config/secrets.yml`, Kubernetes Secret manifests' },
  { rule: 'secrets.yaml', reason: 'Kubernetes Secret manifests, Helm secrets' },
  { rule: 'wp-config.php', reason: 'WordPress database password and auth salts; `wp-config-sample.php` stays readable' },
];

/**
 * The default rules as case-insensitive name globs, for tools that filter by
 * glob (ripgrep). Each glob matches only names its rule refuses, so leaving
 * a rule out is safe and including one never hides a readable file: rules
 * with exceptions (`.env.*`, `id_rsa*` but not `.pub`) or a parent directory
 * are left out. Callers must still check every path with `ReadDenyRules`,
 * which is the rule itself.
 */
export const SECRET_NAME_GLOBS: readonly string[] = DEFAULT_SECRET_RULES.filter((rule) => !rule.except && !rule.parent).map((rule) => rule.rule);

/** A `*` rule split around its star, or a plain name; all rules are lower case. */
const COMPILED_SECRET_RULES = DEFAULT_SECRET_RULES.map((rule) => {
  const star = rule.rule.indexOf('*');
  return {
    rule,
    shown: rule.parent ? `${rule.parent}/${rule.rule}` : rule.rule,
    head: star < 0 ? rule.rule : rule.rule.slice(0, star),
    tail: star < 0 ? undefined : rule.rule.slice(star + 1),
  };
});

/** The default secret rule a path segment (inside `parent`, the segment above it) matches, if any. */
function defaultSecretRule(segment: string, parent: string | undefined): string | undefined {
  // Lower-cased so `.ENV` on a case-insensitive file system is still refused.
  const name = segment.toLowerCase();
  const parentName = parent?.toLowerCase();
  for (const { rule, shown, head, tail } of COMPILED_SECRET_RULES) {
    if (rule.parent !== undefined && rule.parent !== parentName) continue;
    const matches = tail === undefined ? name === head : name.length >= head.length + tail.length && name.startsWith(head) && name.endsWith(tail);
    if (matches && !rule.except?.(name)) return shown;
  }
  return undefined;
}

function denialOfSegment(segment: string, parent?: string): ReadDenial | undefined {
  // `.git/` holds remotes with embedded tokens, hooks and the whole history.
  if (segment.toLowerCase() === '.git') return { kind: 'git', rule: '.git/' };
  const rule = defaultSecretRule(segment, parent);
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

interface CompiledDenyGlob {
  source: string;
  matcher: CompiledGlob;
}

export class ReadDenyRules {
  private readonly globs: CompiledDenyGlob[];

  /** Throws GlobError for a glob over the limits: callers validate first (policy.ts), this fails closed. */
  constructor(denyReadGlobs: readonly string[] = []) {
    this.globs = denyReadGlobs
      .map((glob) => normalizeDenyGlob(glob))
      .filter((glob) => glob.length > 0)
      .map((glob) => ({
        source: glob,
        // nocase and matchBase only ever deny more; nonegate keeps `!x` from meaning "everything but x".
        matcher: compileGlob(glob, { nocase: true, nonegate: true }),
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
    let parent: string | undefined;
    for (const segment of segments) {
      prefix = prefix ? `${prefix}/${segment}` : segment;
      const denial = denialOfSegment(segment, parent) ?? this.policyDenialOf(prefix);
      if (denial) return denial;
      parent = segment;
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
    const parent = slash < 0 ? undefined : relativePath.slice(relativePath.lastIndexOf('/', slash - 1) + 1, slash);
    return denialOfSegment(name, parent) ?? this.policyDenialOf(relativePath);
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
