#!/usr/bin/env bash
# What scripts/scale.sh needs: Debian's `postgresql` (the store of several `qore serve`
# processes) and `haproxy` (the load balancer in front of them).
#
#   scale-env.sh install   apt-get install what is missing (idempotent: nothing to do when
#                          both are there; Debian's own postgresql cluster is stopped, ours
#                          are separate); prints nothing on stdout
#   scale-env.sh check     exit 0 when both are installed, else name what is missing
#
# Used by .ci/run, by scripts/scale.sh (which calls `install` before it starts anything) and
# by docs/deploy.md's commands.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
NAME=scale-env
say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=apt-lib.sh
. "$(dirname "$0")/apt-lib.sh"

have_haproxy() { command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; }
have_pg() { ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; }

cmd_install() {
  if ! have_haproxy; then
    apt_install haproxy
    # The package may start its own service with /etc/haproxy/haproxy.cfg; ours run with
    # generated configs of their own, so stop that one (harmless when it did not start).
    if command -v systemctl >/dev/null 2>&1; then as_root systemctl stop haproxy >/dev/null 2>&1 || true; fi
    if command -v service >/dev/null 2>&1; then as_root service haproxy stop >/dev/null 2>&1 || true; fi
    have_haproxy || die "haproxy installed, but no haproxy binary found"
  fi
  have_pg || bash "$HERE/pg.sh" install
}

cmd_check() {
  local missing=""
  have_haproxy || missing="$missing haproxy"
  have_pg || missing="$missing postgresql"
  [ -z "$missing" ] || die "missing:$missing (run: bash scripts/scale-env.sh install)"
}

case "${1:-}" in
  install) cmd_install ;;
  check) cmd_check ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
