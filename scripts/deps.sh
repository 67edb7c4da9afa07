#!/bin/sh
# scripts/deps.sh — install the Debian packages ward needs to build, test and
# benchmark, only those missing. Needs root when something is missing.
#   scripts/deps.sh            build and test packages
#   scripts/deps.sh bench      also the peer sandboxes the benchmark compares with
set -eu
# a package build (packaging/debian/rules) installs nothing
[ -n "${WARD_NO_DEPS:-}" ] && exit 0

PKGS="gcc make pkg-config libc6-dev groff-base libseccomp-dev libcap-dev libnl-3-dev libnl-route-3-dev
      libjansson-dev check util-linux procps git python3 curl openssl iproute2 diffutils
      qemu-system-x86 busybox-static cpio openssh-server openssh-client
      clang libclang-rt-14-dev gnuplot-nox dash nodejs"
[ "${1:-}" = bench ] && PKGS="$PKGS bubblewrap firejail crun hyperfine"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case $st in *" installed") ;; *) missing="$missing $p" ;; esac
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run 'sudo scripts/deps.sh' (or apt-get install them)" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
