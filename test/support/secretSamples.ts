/**
 * One file name per default secret rule (server/src/access/secrets.ts), and
 * look-alikes the rules must leave readable. The unit suite checks every rule
 * has a sample here, and the adversarial lab plants its sentinel in each, so
 * a rule added without a sample fails a test instead of going unplanted.
 */

export interface SecretSample {
  /** Where the file is written, relative to the folder. */
  path: string;
  /** The rule that must refuse it, as the refusal names it. */
  rule: string;
}

export const SECRET_SAMPLES: readonly SecretSample[] = [
  { path: '.env', rule: '.env' },
  { path: 'config/.env.production', rule: '.env.*' },
  { path: '.envrc', rule: '.envrc' },
  { path: 'certs/server.pem', rule: '*.pem' },
  { path: 'certs/private.key', rule: '*.key' },
  { path: 'certs/bundle.p12', rule: '*.p12' },
  { path: 'certs/Client.PFX', rule: '*.pfx' },
  { path: 'ios/AuthKey_ABC123.p8', rule: '*.p8' },
  { path: 'android/app.jks', rule: '*.jks' },
  { path: 'android/release.keystore', rule: '*.keystore' },
  { path: 'keys/server.ppk', rule: '*.ppk' },
  { path: 'vault.kdbx', rule: '*.kdbx' },
  { path: 'id_rsa', rule: 'id_rsa*' },
  { path: 'ssh/id_dsa', rule: 'id_dsa*' },
  { path: 'ssh/id_ecdsa_sk', rule: 'id_ecdsa*' },
  { path: 'keys/id_ed25519', rule: 'id_ed25519*' },
  { path: '.git-credentials', rule: '.git-credentials' },
  { path: '.netrc', rule: '.netrc' },
  { path: 'win/_netrc', rule: '_netrc' },
  { path: '.npmrc', rule: '.npmrc' },
  { path: '.pypirc', rule: '.pypirc' },
  { path: 'home/.gem/credentials', rule: '.gem/credentials' },
  { path: '.cargo/credentials', rule: '.cargo/credentials' },
  { path: '.cargo/credentials.toml', rule: '.cargo/credentials.toml' },
  { path: '.pgpass', rule: '.pgpass' },
  { path: 'db/.my.cnf', rule: '.my.cnf' },
  { path: '.s3cfg', rule: '.s3cfg' },
  { path: '.aws/credentials', rule: '.aws/credentials' },
  { path: 'ci/.AWS/Config', rule: '.aws/config' },
  { path: '.docker/config.json', rule: '.docker/config.json' },
  { path: '.dockercfg', rule: '.dockercfg' },
  { path: '.kube/config', rule: '.kube/config' },
  { path: 'credentials.json', rule: 'credentials.json' },
  { path: 'google/client_secret_1234.apps.googleusercontent.com.json', rule: 'client_secret*.json' },
  { path: 'gcloud/application_default_credentials.json', rule: 'application_default_credentials.json' },
  { path: 'deploy/service-account-key.json', rule: 'service-account*.json' },
  { path: 'deploy/service_account.json', rule: 'service_account*.json' },
  { path: '.terraformrc', rule: '.terraformrc' },
  { path: 'win/terraform.rc', rule: 'terraform.rc' },
  { path: '.terraform.d/credentials.tfrc.json', rule: 'credentials.tfrc.json' },
  { path: 'infra/terraform.tfstate', rule: '*.tfstate' },
  { path: 'infra/terraform.tfstate.backup', rule: '*.tfstate.backup' },
  { path: 'infra/prod.tfvars', rule: '*.tfvars' },
  { path: 'infra/prod.auto.tfvars.json', rule: '*.tfvars.json' },
  { path: '.vault-token', rule: '.vault-token' },
  { path: 'public/.htpasswd', rule: '.htpasswd' },
  { path: 'config/secrets.yml', rule: 'secrets.yml' },
  { path: 'k8s/secrets.yaml', rule: 'secrets.yaml' },
  { path: 'wordpress/wp-config.php', rule: 'wp-config.php' },
];

/** Names close to a rule that hold no secret: templates, public keys, look-alikes in another directory. */
export const READABLE_LOOK_ALIKES: readonly string[] = [
  '.env.example',
  'app/.env.sample',
  '.env.production.template',
  'ssh/id_ecdsa.pub',
  'keys/id_ed25519.pub',
  'id_rsa.pub',
  'wordpress/wp-config-sample.php',
  'infra/terraform.tfvars.example',
  'docs/credentials',
  'src/config',
  'docker/config.json',
  'aws/credentials',
  'certs/ca.crt',
  'keys.ts',
  'src/envrc.ts',
];
