#!/usr/bin/env bash
# Clients for qore serve's tests (tests/serve): the OpenAI and Anthropic Python SDKs and
# pytest in $CACHE/serve-venv, and Claude Code from npm in $CACHE/claude-code, all pinned.
#
#   serve-env.sh install   venv + npm package (idempotent; redone if the pins change)
#   serve-env.sh python    install if needed, print the venv's python (only thing on stdout)
#   serve-env.sh claude    install if needed, print Claude Code's native `claude` binary
#
# Environment: QORE_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore), QORE_PYTHON
# (default python3). Files in $CACHE: serve-venv/, claude-code/, serve-env.lock.
set -euo pipefail

CLAUDE_CODE_VERSION=2.1.332
# Every package pinned, dependencies included (pip freeze of one install), so a run here is
# a run anywhere.
PY_PINS="openai==3.57.0 anthropic==2.14.0 pytest==9.2.0
annotated-types==0.8.0 anyio==4.16.0 docstring_parser==0.18.0 h11==0.16.0
httpcore2==2.16.2 httpx2==2.16.2 idna==3.20 iniconfig==2.3.1 jiter==0.19.0
opentelemetry-api==1.45.2 packaging==26.4 pluggy==1.7.0 pydantic==2.14.4
pydantic_core==2.50.5 Pygments==2.21.0 sniffio==1.3.1 truststore==0.10.5
typing-inspection==0.4.5 typing_extensions==4.16.0"
PY_PINS="$(echo $PY_PINS)"  # one line
PINS="$PY_PINS @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION"

CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
VENV="$CACHE/serve-venv"
NPM_DIR="$CACHE/claude-code"
STAMP="$VENV/.qore-pins"
LOCK="$CACHE/serve-env.lock"
PYTHON="${QORE_PYTHON:-python3}"
NAME=serve-env
LOCK_WAIT=600
# say, die, take_lock (the lock on $LOCK) and installed (venv + $STAMP = $PINS), shared with
# the model server scripts.
# shellcheck source=server-lib.sh
. "$(dirname "$0")/server-lib.sh"

claude_path() {  # the native binary: the platform package's (npm's optional dependency),
                 # else the wrapper's bin/claude.exe, which its postinstall replaces by it
  local c
  for c in "$NPM_DIR"/node_modules/@anthropic-ai/claude-code-*/claude \
           "$NPM_DIR/node_modules/@anthropic-ai/claude-code/bin/claude.exe"; do
    if [ -f "$c" ] && "$c" --version 2>/dev/null | grep -qF "$CLAUDE_CODE_VERSION"; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

cmd_install() {
  installed && claude_path >/dev/null && return 0
  take_lock
  installed && claude_path >/dev/null && return 0
  command -v npm >/dev/null 2>&1 || die "npm not found (install Node.js 18 or newer)"
  say "installing $PINS into $CACHE"
  rm -rf "$VENV" "$NPM_DIR"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  # shellcheck disable=SC2086
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input --no-deps $PY_PINS >&2
  "$VENV/bin/python" -c "import openai, anthropic, pytest" \
    || die "the venv's packages do not import"
  mkdir -p "$NPM_DIR"
  npm install --prefix "$NPM_DIR" --no-audit --no-fund --silent \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
  local claude
  claude="$(claude_path)" || die "npm installed Claude Code, but no claude binary in $NPM_DIR runs"
  say "claude: $claude"
  printf '%s\n' "$PINS" >"$STAMP"   # written last: a partial install is redone
  say "installed"
}

case "${1:-}" in
  install) cmd_install ;;
  python) cmd_install; echo "$VENV/bin/python" ;;
  claude) cmd_install; claude_path ;;
  *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2 ;;
esac
