#!/usr/bin/env bash
# A PostgreSQL server for qore: Debian's `postgresql` package, one cluster in a directory of
# your choosing, run as an unprivileged user, listening on loopback only.
#
#   pg.sh install                  apt-get install postgresql when its binaries are missing
#   pg.sh start DIR [PORT]         initdb DIR/data if new, start it on 127.0.0.1:PORT
#                                  (default 5432); prints the store URL (only thing on stdout)
#   pg.sh stop DIR                 fast shutdown (sessions cut, nothing committed lost)
#   pg.sh url DIR                  print the URL of the cluster in DIR
#   pg.sh psql DIR [ARGS...]       psql on it, as the owner
#   pg.sh freeze DIR               SIGSTOP the server and its backends: connections stay
#                                  open and nothing answers (a hung database, for tests)
#   pg.sh thaw DIR                 SIGCONT them: everything queued is answered
#
# Environment:
#   QORE_PG_OWNER_PID  when set, the server is stopped once that process has exited (tests
#                      pass their own pid, so a killed test run leaves no server behind)
#   QORE_PG_REMOVE_WITH_OWNER
#                      with QORE_PG_OWNER_PID, 1: DIR is removed too once the server stopped
#                      (a test cluster's data: hundreds of MB after a run)
#   QORE_PG_USER       the unprivileged user that owns and runs the cluster when this script
#                      runs as root (default qore-pg, created as a system user if missing);
#                      as any other user, that user runs it
#   QORE_PG_MAX_CONN   max_connections (default 300)
#   QORE_PG_TLS        when 1, the cluster also speaks TLS: a new self-signed CA and a server
#                      certificate for 127.0.0.1 and localhost are made in DIR/tls (once;
#                      the CA is DIR/tls/ca.pem) and ssl is turned on in the cluster's
#                      configuration, so later starts keep it. Connect with
#                      `?sslmode=require&sslrootcert=DIR/tls/ca.pem`.
#
# The database `qore` is owned by the role `qore`; local connections are trusted (loopback
# only: this is a development and test cluster; see docs/deploy.md for a production one).
set -euo pipefail

NAME=pg
say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=apt-lib.sh
. "$(dirname "$0")/apt-lib.sh"

bindir() {  # the newest installed server's bin directory
  local d
  d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
  [ -n "$d" ] && [ -x "$d/postgres" ] && echo "$d"
}

cmd_install() {
  if bindir >/dev/null; then return 0; fi
  apt_install postgresql
  # Debian's package starts its own cluster on 5432; ours are separate, so stop that one.
  if command -v pg_ctlcluster >/dev/null; then
    for c in $(pg_lsclusters -h 2>/dev/null | awk '{print $1"/"$2}'); do
      as_root pg_ctlcluster "${c%/*}" "${c#*/}" stop 2>/dev/null || true
    done
  fi
  bindir >/dev/null || die "postgresql installed, but no server binaries found"
}

owner() {  # the user that runs the cluster
  if [ "$(id -u)" -ne 0 ]; then id -un; return; fi
  local u="${QORE_PG_USER:-qore-pg}"
  if ! id -u "$u" >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin "$u" >&2 \
      || die "cannot create the user $u"
  fi
  echo "$u"
}

as_owner() {  # run a command as the cluster's owner
  local u; u="$(owner)"
  if [ "$(id -un)" = "$u" ]; then "$@"; else runuser -u "$u" -- "$@"; fi
}

port_of() { cat "$1/port" 2>/dev/null || echo 5432; }
url_of() { echo "postgres://qore@127.0.0.1:$(port_of "$1")/qore"; }

running() { as_owner "$BIN/pg_ctl" -D "$1/data" status >/dev/null 2>&1; }

tls_setup() {  # a CA and a server certificate in DIR/tls, and ssl on in the cluster's conf
  local dir="$1" t="$1/tls" u
  u="$(owner)"
  command -v openssl >/dev/null || die "QORE_PG_TLS=1 needs openssl"
  if [ ! -s "$t/server.crt" ]; then
    mkdir -p "$t"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 -subj "/CN=qore test CA" \
      -keyout "$t/ca.key" -out "$t/ca.pem" >/dev/null 2>&1 || die "cannot make the test CA"
    openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=localhost" \
      -keyout "$t/server.key" -out "$t/server.csr" >/dev/null 2>&1 \
      || die "cannot make the server key"
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" \
      >"$t/server.ext"
    openssl x509 -req -in "$t/server.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" \
      -CAcreateserial -days 3650 -sha256 -extfile "$t/server.ext" -out "$t/server.crt" \
      >/dev/null 2>&1 || die "cannot sign the server certificate"
    chmod 600 "$t/server.key" "$t/ca.key"
    [ "$(id -u)" -ne 0 ] || chown -R "$u" "$t"
  fi
  if ! grep -q "^ssl = on" "$dir/data/postgresql.conf"; then
    as_owner tee -a "$dir/data/postgresql.conf" >/dev/null <<CONF
ssl = on
ssl_cert_file = '$t/server.crt'
ssl_key_file = '$t/server.key'
CONF
  fi
  say "TLS on; the CA is $t/ca.pem"
}

cmd_start() {
  local dir="${1:?usage: pg.sh start DIR [PORT]}" port="${2:-5432}"
  cmd_install
  BIN="$(bindir)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  local u; u="$(owner)"
  [ "$(id -u)" -ne 0 ] || chown "$u" "$dir"
  echo "$port" >"$dir/port.new" && mv "$dir/port.new" "$dir/port"
  [ "$(id -u)" -ne 0 ] || chown "$u" "$dir/port"
  if [ ! -s "$dir/data/PG_VERSION" ]; then
    as_owner "$BIN/initdb" -D "$dir/data" -U qore --auth=trust -E UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { tail -n 20 "$dir/initdb.log" >&2; die "initdb failed"; }
  fi
  [ "${QORE_PG_TLS:-}" != 1 ] || tls_setup "$dir"
  if running "$dir"; then
    url_of "$dir"; return 0
  fi
  as_owner "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=${QORE_PG_MAX_CONN:-300} -c fsync=on" \
    >&2 || { tail -n 20 "$dir/server.log" >&2; die "the server did not start"; }
  if ! as_owner "$BIN/psql" -h "$dir" -p "$port" -U qore -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = 'qore'" | grep -q 1; then
    as_owner "$BIN/createdb" -h "$dir" -p "$port" -U qore qore >&2
  fi
  if [ -n "${QORE_PG_OWNER_PID:-}" ]; then  # stop when the owner is gone
    ( trap '' HUP; while kill -0 "$QORE_PG_OWNER_PID" 2>/dev/null; do sleep 1; done
      ( cmd_signal CONT "$dir" ) || true   # a frozen server takes no signal to stop
      as_owner "$BIN/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
      if [ "${QORE_PG_REMOVE_WITH_OWNER:-}" = 1 ]; then
        for _ in $(seq 60); do [ -e "$dir/data/postmaster.pid" ] || break; sleep 1; done
        rm -rf "$dir"
      fi
    ) </dev/null >/dev/null 2>&1 &
    disown
  fi
  url_of "$dir"
}

cmd_stop() {
  local dir="${1:?usage: pg.sh stop DIR}"
  BIN="$(bindir)" || die "no PostgreSQL server installed"
  [ -d "$dir/data" ] || return 0
  if running "$dir"; then
    as_owner "$BIN/pg_ctl" -D "$dir/data" -m fast -w stop >&2
  fi
}

cmd_psql() {
  local dir="${1:?usage: pg.sh psql DIR [ARGS...]}"; shift
  BIN="$(bindir)" || die "no PostgreSQL server installed"
  as_owner "$BIN/psql" -h "$dir" -p "$(port_of "$dir")" -U qore -d qore "$@"
}

# The cluster's processes: the postmaster, then its children (from /proc: no procps needed).
cluster_pids() {
  local dir="${1:?usage: pg.sh freeze|thaw DIR}" pid
  [ -r "$dir/data/postmaster.pid" ] || die "no server running in $dir"
  pid="$(head -n 1 "$dir/data/postmaster.pid")"
  echo "$pid"
  grep -l "^PPid:[[:space:]]*$pid\$" /proc/[0-9]*/status 2>/dev/null | cut -d/ -f3 || true
}

cmd_signal() {
  local signal="$1" dir="$2" pids
  pids="$(cluster_pids "$dir")"
  # shellcheck disable=SC2086 # one pid per word
  kill "-$signal" $pids
}

case "${1:-}" in
  install) cmd_install ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  url) shift; url_of "${1:?usage: pg.sh url DIR}" ;;
  psql) shift; cmd_psql "$@" ;;
  freeze) shift; cmd_signal STOP "${1:?usage: pg.sh freeze DIR}" ;;
  thaw) shift; cmd_signal CONT "${1:?usage: pg.sh thaw DIR}" ;;
  *) sed -n '2,30p' "$0" >&2; exit 2 ;;
esac
