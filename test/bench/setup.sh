#!/usr/bin/env bash
# What `npm run bench` needs beyond npm packages, installed when missing:
# ripgrep (the reference point for the search figures, and what the server
# searches with), chromium (renders the webview, and drives code-server for
# the activation figure) and code-server itself (a real VS Code extension
# host). Without root the Debian packages are named and skipped: the figures
# that need them print n/a and say why, the others still run.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"

missing=()
command -v rg >/dev/null || missing+=(ripgrep)
command -v chromium >/dev/null || [[ -n "${CHROMIUM_PATH:-}" ]] || missing+=(chromium)
command -v krb5-config >/dev/null || missing+=(libkrb5-dev)
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    echo "bench: installing ${missing[*]} from Debian…" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "bench: missing ${missing[*]} (Debian: sudo apt-get install -y ${missing[*]}); the figures that need them print n/a" >&2
  fi
fi

# code-server for the activation figure; without it that figure is measured in plain Node.
bash "$ROOT/test/vscode/setup.sh" || echo "bench: code-server could not be installed; activation is measured in plain Node" >&2
exit 0
