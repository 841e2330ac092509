#!/usr/bin/env bash
# The system packages `npm test`, `npm start`, `npm run bench` and .ci/run
# need beyond npm, named by their Debian names:
#   chromium     the browser the VS Code suites drive (or CHROMIUM_PATH)
#   ripgrep      rg: one of the two search engines, and code-server's search
#   libkrb5-dev  krb5-config: to build code-server's kerberos module
#
#   bash test/setup/system-packages.sh --for "npm test" chromium ripgrep libkrb5-dev
#
# Exits 0 at once when all are present. Missing ones are installed with
# apt-get when run as root; otherwise it prints the one command to run
# (apt-get with sudo, or Homebrew on macOS) and exits 1.
set -uo pipefail

purpose="this command"
if [[ "${1:-}" == "--for" ]]; then
  purpose="$2"
  shift 2
fi

present() {
  case "$1" in
    chromium)
      # What the suites launch: CHROMIUM_PATH when set, else Debian's chromium.
      if [[ -n "${CHROMIUM_PATH:-}" ]]; then [[ -x "$CHROMIUM_PATH" ]]; else command -v chromium >/dev/null; fi
      ;;
    ripgrep) command -v rg >/dev/null ;;
    libkrb5-dev) command -v krb5-config >/dev/null ;;
    *)
      echo "system-packages.sh: unknown package $1" >&2
      exit 2
      ;;
  esac
}

missing=()
for package in "$@"; do
  present "$package" || missing+=("$package")
done
((${#missing[@]})) || exit 0

if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "$purpose: installing ${missing[*]} from Debian (apt-get; once)…" >&2
  if apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
    still=()
    for package in "${missing[@]}"; do
      present "$package" || still+=("$package")
    done
    ((${#still[@]})) || exit 0
    echo "$purpose: apt-get ran, but ${still[*]} is still not found (rg, krb5-config, chromium on PATH)." >&2
    exit 1
  fi
  echo "$purpose: apt-get could not install ${missing[*]}; install them and run it again." >&2
  exit 1
fi

{
  echo
  echo "$purpose needs system packages that are missing: ${missing[*]}."
  if command -v apt-get >/dev/null; then
    echo "Install them, then run it again:"
    echo
    echo "    sudo apt-get install -y ${missing[*]}"
  elif [[ "$(uname -s)" == Darwin ]]; then
    brew=()
    chromium=false
    for package in "${missing[@]}"; do
      case "$package" in
        ripgrep) brew+=(ripgrep) ;;
        libkrb5-dev) brew+=(krb5) ;;
        chromium) chromium=true ;;
      esac
    done
    echo "Install them with Homebrew, then run it again:"
    echo
    ((${#brew[@]})) && echo "    brew install ${brew[*]}"
    if $chromium; then
      echo "    brew install --cask chromium"
      echo "    export CHROMIUM_PATH=/Applications/Chromium.app/Contents/MacOS/Chromium"
    fi
  else
    programs=()
    for package in "${missing[@]}"; do
      case "$package" in
        ripgrep) programs+=("rg (ripgrep)") ;;
        libkrb5-dev) programs+=("krb5-config (Kerberos development files)") ;;
        chromium) programs+=("chromium (or CHROMIUM_PATH naming a Chromium)") ;;
      esac
    done
    echo "Install them with your system's package manager, then run it again. Looked for on PATH:"
    printf '    %s\n' "${programs[@]}"
  fi
  if [[ " ${missing[*]} " == *" chromium "* && -n "${CHROMIUM_PATH:-}" ]]; then
    echo "(CHROMIUM_PATH is set to $CHROMIUM_PATH, which is not an executable.)"
  fi
  echo
} >&2
exit 1
