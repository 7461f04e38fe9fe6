#!/usr/bin/env bash
# MCP servers for qore's tests: the Python `mcp` SDK (FastMCP servers written in the tests)
# in a venv, and npm's @modelcontextprotocol/server-everything and server-filesystem, all
# pinned.
#
#   mcp-env.sh install   venv + npm packages under $CACHE (idempotent)
#   mcp-env.sh python    install if needed, print the venv's python (only thing on stdout)
#   mcp-env.sh everything  install if needed, print server-everything's entry script
#   mcp-env.sh filesystem  install if needed, print server-filesystem's entry script
#
# Environment: QORE_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore), QORE_PYTHON
# (default python3). Files in $CACHE: mcp-venv/, mcp-npm/, mcp-env.lock.
set -euo pipefail

MCP_VERSION=2.3.0
EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
PINS="mcp==$MCP_VERSION @modelcontextprotocol/server-everything@$EVERYTHING_VERSION"
PINS="$PINS @modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION"

CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
VENV="$CACHE/mcp-venv"
NPM_DIR="$CACHE/mcp-npm"
STAMP="$VENV/.qore-pins"
LOCK="$CACHE/mcp-env.lock"
PYTHON="${QORE_PYTHON:-python3}"
NAME=mcp-env
LOCK_WAIT=600
EVERYTHING="$NPM_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
FILESYSTEM="$NPM_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }

installed() {
  [ -x "$VENV/bin/python" ] && [ -f "$EVERYTHING" ] && [ -f "$FILESYSTEM" ] \
    && [ "$(cat "$STAMP" 2>/dev/null)" = "$PINS" ]
}

take_lock() {  # serialises concurrent installs (tests run in parallel)
  mkdir -p "$CACHE"
  exec 9>"$LOCK"
  if command -v flock >/dev/null 2>&1; then
    flock -w "$LOCK_WAIT" 9 || die "timed out waiting for $LOCK"
  fi
}

install() {
  installed && return 0
  take_lock
  installed && return 0
  command -v npm >/dev/null 2>&1 || die "npm not found (install Node.js 18 or newer)"
  say "installing $PINS into $CACHE"
  rm -rf "$VENV" "$NPM_DIR"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input "mcp==$MCP_VERSION" >&2
  mkdir -p "$NPM_DIR"
  npm install --prefix "$NPM_DIR" --no-audit --no-fund --silent \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
    "@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION" >&2
  for entry in "$EVERYTHING" "$FILESYSTEM"; do
    [ -f "$entry" ] || die "npm packages installed, but $entry is missing"
  done
  printf '%s\n' "$PINS" >"$STAMP"   # written last: a partial install is redone
  say "installed"
}

case "${1:-}" in
  install) install ;;
  python) install; echo "$VENV/bin/python" ;;
  everything) install; echo "$EVERYTHING" ;;
  filesystem) install; echo "$FILESYSTEM" ;;
  *) die "usage: mcp-env.sh install|python|everything|filesystem" ;;
esac
