#!/usr/bin/env bash
# What the Secret Service test of `qore providers set-key` needs: Debian's `dbus`
# (dbus-run-session, a private session bus) and `gnome-keyring` (gnome-keyring-daemon, a
# real Secret Service on that bus).
#
#   keyring-env.sh install   apt-get install what is missing (idempotent: nothing to do when
#                            both are there); prints nothing on stdout
#   keyring-env.sh check     exit 0 when both are installed, else name what is missing
#
# Used by .ci/run, and by crates/qore-cli/tests/cli_providers_keyring.rs itself (so a bare
# `cargo test` installs them too); the test is skipped, saying why, only where this fails.
set -euo pipefail

NAME=keyring-env
say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=apt-lib.sh
. "$(dirname "$0")/apt-lib.sh"

have() { command -v dbus-run-session >/dev/null 2>&1 && command -v gnome-keyring-daemon >/dev/null 2>&1; }

cmd_install() {
  have && return 0
  apt_install dbus dbus-daemon gnome-keyring
  have || die "installed, but dbus-run-session or gnome-keyring-daemon is not on PATH"
}

cmd_check() {
  local missing=""
  command -v dbus-run-session >/dev/null 2>&1 || missing="$missing dbus-run-session"
  command -v gnome-keyring-daemon >/dev/null 2>&1 || missing="$missing gnome-keyring-daemon"
  [ -z "$missing" ] || die "missing:$missing (run: bash scripts/keyring-env.sh install)"
}

case "${1:-}" in
  install) cmd_install ;;
  check) cmd_check ;;
  *) sed -n '2,11p' "$0" >&2; exit 2 ;;
esac
