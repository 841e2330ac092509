#!/usr/bin/env bash
# Installs code-server (VS Code 1.100.3 served to a browser) into a cache
# folder for the extension-host suite, the browser end-to-end suite and
# `npm start`. It is a test tool, not a dependency of the extension, so it
# lives outside package.json in .vscode-test/code-server (gitignored).
#
# Desktop VS Code cannot be downloaded without internet; code-server comes
# from the npm registry, but its postinstall downloads prebuilt binaries, so
# it is installed with --ignore-scripts and the postinstall is done by hand:
# native modules rebuilt from source, Debian's ripgrep in place of the
# downloaded one, and the links the postinstall would have made.
#
# Idempotent: a finished install leaves a stamp naming its version; with the
# stamp present this exits at once. An interrupted install has no stamp and is
# redone from scratch.
#
# Needs the Debian packages ripgrep and libkrb5-dev: installed first when
# missing and run as root, else named (test/setup/system-packages.sh).
set -euo pipefail

VERSION=4.100.3
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DIR="${CODE_SERVER_HOME:-$ROOT/.vscode-test/code-server}"
STAMP="$DIR/.installed-$VERSION"
PKG="$DIR/node_modules/code-server"

if [[ -f "$STAMP" && -f "$PKG/out/node/entry.js" ]]; then
  exit 0
fi

bash "$ROOT/test/setup/system-packages.sh" --for "code-server's install (test/vscode/setup.sh)" ripgrep libkrb5-dev

echo "Installing code-server $VERSION into $DIR (once; about a minute)…" >&2
rm -rf "$DIR"
mkdir -p "$DIR"
cd "$DIR"
# A package of its own, so npm never walks up into the extension's package.json.
printf '{ "name": "repo-discuss-code-server", "private": true }\n' > package.json

quiet=(--no-audit --no-fund --loglevel=error)
npm install "${quiet[@]}" --ignore-scripts "code-server@$VERSION"

# argon2 (password hashing; unused with --auth none but loaded at start):
# its prebuilt download fails offline, and its install script then builds it.
npm rebuild "${quiet[@]}" argon2

cd "$PKG/lib/vscode"
# VS Code's own runtime dependencies, pinned by its shrinkwrap.
npm install "${quiet[@]}" --omit=dev --ignore-scripts
# Native modules of the server, built from source against this Node.
npm_config_yes=true npm rebuild "${quiet[@]}" @vscode/spdlog @vscode/deviceid native-watchdog node-pty kerberos
# @vscode/ripgrep downloads its binary in a postinstall; Debian's rg stands in.
mkdir -p node_modules/@vscode/ripgrep/bin
ln -sfn "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
# The server looks modules up through node_modules.asar, as in a packaged build.
ln -sfn node_modules node_modules.asar
ln -sfn code-linux.sh bin/remote-cli/code-server
ln -sfn browser-linux.sh bin/helpers/browser.sh
# The built-in extensions' runtime dependencies (the Markdown and Git ones, …).
(cd extensions && npm install "${quiet[@]}" --omit=dev)

touch "$STAMP"
echo "code-server $VERSION ready: $PKG/out/node/entry.js" >&2
