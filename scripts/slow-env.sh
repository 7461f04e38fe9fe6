#!/usr/bin/env bash
# What the listener's tests and checks need (docs/deploy.md, "Timeouts, limits and TLS"):
# Debian's `curl` and `openssl` (the HTTPS tests: curl --cacert, a test CA made with
# `openssl req`), `util-linux`'s prlimit (cli_serve_limits) and `slowhttptest` (a real slow
# client, run by hand: `slow-env.sh run BASE`).
#
#   slow-env.sh install    apt-get install what is missing (idempotent); nothing on stdout
#   slow-env.sh check      exit 0 when all are installed, else name what is missing
#   slow-env.sh run BASE   slowhttptest against a running server at BASE (http://HOST:PORT):
#                          slow headers (-H) then slow body (-B), 500 connections each for
#                          30 s; one summary line each (service available: YES/NO)
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

cmd_run() {  # the slow kinds against BASE_URL, each summed up from slowhttptest's CSV
  local base="${1:?usage: slow-env.sh run BASE_URL}" out mode path
  cmd_install
  out="$(mktemp -d)"
  for mode in "-H /v1/models" "-B /v1/chat/completions"; do
    path="${mode#* }"; mode="${mode% *}"
    slowhttptest "$mode" -c 500 -r 200 -i 2 -l 30 -s 100000 -t POST -p 3 \
      -u "$base$path" -g -o "$out/run" >/dev/null 2>&1 || true
    # Seconds,Closed,Pending,Connected,Service Available (100 = the probe was answered)
    awk -F, -v mode="$mode" -v path="$path" 'NR > 1 {
        if ($4 > most) most = $4; if ($5 < 100) down++; last = $0; n++ }
      END { split(last, f, ","); printf "slowhttptest %s %s: %d s, most connected %d, " \
            "closed by the server %d, service available: %s\n", mode, path, n, most, f[2], \
            (down ? "NO (" down " s)" : "YES") }' "$out/run.csv"
  done
  rm -rf "$out"
}

case "${1:-}" in
  install) cmd_install ;;
  check) cmd_check ;;
  run) shift; cmd_run "$@" ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
