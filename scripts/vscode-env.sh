#!/usr/bin/env bash
# The VS Code extension (editors/vscode): its npm packages, its build, its .vsix and its
# tests, all from npm packages pinned in editors/vscode/package-lock.json.
#
#   vscode-env.sh install   npm ci into editors/vscode/node_modules (idempotent; redone when
#                           package-lock.json changes; install scripts are not run: esbuild
#                           finds its platform package itself, and vsce-sign's would download)
#   vscode-env.sh build     install if needed; type-check (tsc) and bundle (esbuild) into
#                           editors/vscode/dist/extension.js (the package.json scripts
#                           `build`, `package` and `test` are what each step runs)
#   vscode-env.sh package   build; `vsce package` the bundle; print the .vsix path (only
#                           thing on stdout)
#   vscode-env.sh test      build; run the extension's Node tests (node --test) against
#                           QORE_BIN (default: target/debug/qore)
#
# Environment: QORE_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore), QORE_BIN.
# Files in $CACHE: vscode-env.lock. Needs Node.js 20 or newer and npm.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
EXT="$(cd "$HERE/../editors/vscode" && pwd)"
MODULES="$EXT/node_modules"
STAMP="$MODULES/.qore-lock-hash"
BIN="$MODULES/.bin"
CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
LOCK="$CACHE/vscode-env.lock"
NAME=vscode-env
LOCK_WAIT=600
# say, die and take_lock (the lock on $LOCK), shared with the other install scripts.
# shellcheck source=server-lib.sh
. "$HERE/server-lib.sh"

lock_hash() { sha256sum "$EXT/package-lock.json" | cut -d' ' -f1; }

installed() {  # the stamp holds the hash of the package-lock.json installed
  [ -x "$BIN/tsc" ] && [ -x "$BIN/esbuild" ] && [ -x "$BIN/vsce" ] \
    && [ "$(cat "$STAMP" 2>/dev/null)" = "$(lock_hash)" ]
}

check_node() {
  command -v node >/dev/null 2>&1 || die "node not found (install Node.js 20 or newer)"
  command -v npm >/dev/null 2>&1 || die "npm not found (install Node.js 20 or newer)"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" -ge 20 ] || die "node $(node --version) is too old: @vscode/vsce needs 20 or newer"
}

cmd_install() {
  installed && return 0
  check_node
  take_lock
  installed && return 0
  say "npm ci in $EXT"
  rm -f "$STAMP"
  (cd "$EXT" && npm ci --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error) >&2 \
    || die "npm ci failed in $EXT"
  lock_hash >"$STAMP"   # written last: a partial install is redone
  say "installed"
}

cmd_build() {
  cmd_install
  take_lock
  (cd "$EXT" && npm run --silent build) >&2 || die "the extension does not build"
  say "built $EXT/dist/extension.js"
}

cmd_package() {
  cmd_build
  local version vsix
  version="$(node -p "require('$EXT/package.json').version")"
  vsix="$EXT/qore-$version.vsix"
  (cd "$EXT" && npm run --silent package -- --out "$vsix") >&2 || die "vsce package failed"
  echo "$vsix"
}

cmd_test() {
  cmd_build
  cd "$EXT"
  npm run --silent test
}

case "${1:-}" in
  install) cmd_install ;;
  build) cmd_build ;;
  package) cmd_package ;;
  test) cmd_test ;;
  *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2 ;;
esac
