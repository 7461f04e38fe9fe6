#!/usr/bin/env bash
# What the listener's tests and checks need (docs/deploy.md, "Timeouts, limits and TLS"):
# Debian's `curl` and `openssl` (the HTTPS tests: curl --cacert, a test CA made with
# `openssl req`), `util-linux`'s prlimit (cli_serve_limits) and `slowhttptest` (a real slow
# client, run by hand: `slow-env.sh run URL`).
#
#   slow-env.sh install    apt-get install what is missing (idempotent); nothing on stdout
#   slow-env.sh check      exit 0 when all are installed, else name what is missing
#   slow-env.sh run URL    slowhttptest against URL: slowloris (-H), then slow body (-B),
#                          500 connections each for 30 s; prints its summaries
#
# Used by .ci/run.
set -euo pipefail

NAME=slow-env
say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=apt-lib.sh
. "$(dirname "$0")/apt-lib.sh"

# command:package
NEEDED="curl:curl openssl:openssl prlimit:util-linux slowhttptest:slowhttptest"

missing() {
  local pair out=""
  for pair in $NEEDED; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || out="$out ${pair#*:}"
  done
  echo "$out"
}

cmd_install() {
  local need
  need="$(missing)"
  # shellcheck disable=SC2086
  [ -z "$need" ] || apt_install $need
  need="$(missing)"
  [ -z "$need" ] || die "still missing after install:$need"
}

cmd_check() {
  local need
  need="$(missing)"
  [ -z "$need" ] || die "missing:$need (run: bash scripts/slow-env.sh install)"
}

cmd_run() {
  local url="${1:?usage: slow-env.sh run URL}" mode
  cmd_install
  for mode in -H -B; do
    say "slowhttptest $mode against $url"
    slowhttptest "$mode" -c 500 -r 200 -i 2 -l 30 -s 100000 -t POST -p 3 -u "$url" 2>&1 \
      | grep -E "test type|number of connections|service available|Exit status|closed|pending|connected|error" \
      | tail -n 12
  done
}

case "${1:-}" in
  install) cmd_install ;;
  check) cmd_check ;;
  run) shift; cmd_run "$@" ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
