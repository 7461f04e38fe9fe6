# Sourced by the scripts that need Debian packages: `apt_install PKG...` installs them (one
# `apt-get update` and a retry when the first install fails, as on a fresh machine whose
# package lists are empty); `as_root CMD...` runs a command as root (sudo when not root).
# Needs NAME set, and say/die defined.

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
  command -v apt-get >/dev/null || die "no apt-get to install $*"
  say "installing Debian's $*"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2 \
    || { as_root apt-get update -q >&2 && \
         as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >&2; } \
    || die "apt-get install $* failed"
}
