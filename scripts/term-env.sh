#!/usr/bin/env bash
# What the terminal tests of `qore chat` need: Debian's `tmux` (a real terminal whose screen
# a test reads back with `capture-pane -e`, escape codes included).
#
#   term-env.sh install   apt-get install tmux when it is missing (idempotent); nothing on stdout
#   term-env.sh tmux      install if needed, print the tmux binary (the only thing on stdout)
#
# Used by .ci/run and by crates/qore-cli/tests/common/tmux.rs itself (so a bare `cargo test`
# installs it too); a terminal test is skipped, saying why, only where this fails.
set -euo pipefail

NAME=term-env
say() { echo "$NAME: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=apt-lib.sh
. "$(dirname "$0")/apt-lib.sh"

cmd_install() {
  command -v tmux >/dev/null 2>&1 && return 0
  apt_install tmux
  command -v tmux >/dev/null 2>&1 || die "installed, but tmux is not on PATH"
}

case "${1:-}" in
  install) cmd_install ;;
  tmux) cmd_install; command -v tmux ;;
  *) sed -n '2,9p' "$0" >&2; exit 2 ;;
esac
