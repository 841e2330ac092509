#!/usr/bin/env bash
# What `npm run bench` needs beyond npm packages, installed when missing:
# ripgrep (the reference point for the search figures, and what the server
# searches with), chromium (renders the webview, and drives code-server for
# the activation figure) and code-server itself (a real VS Code extension
# host). Without root the Debian packages are named and skipped: the figures
# that need them print n/a and say why, the others still run.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"

bash "$ROOT/test/setup/system-packages.sh" --for "npm run bench" ripgrep chromium libkrb5-dev ||
  echo "bench: going on without them; the figures that need them print n/a" >&2

# code-server for the activation figure; without it that figure is measured in plain Node.
bash "$ROOT/test/vscode/setup.sh" || echo "bench: code-server could not be installed; activation is measured in plain Node" >&2
exit 0
