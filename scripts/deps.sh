#!/bin/sh
# scripts/deps.sh — install the Debian packages ward needs, only those
# missing, by set. Needs root when something is missing.
#   scripts/deps.sh build      compile ward and libward (what `make` needs)
#   scripts/deps.sh demo       the build set: `make demo` needs nothing more
#   scripts/deps.sh test       build + what `make test`/`make check` need (Check, the
#                              VM tier's qemu, the fuzzers' clang, ssh for the remote
#                              sessions, node/python/git for the tests' tools, shells
#                              and man-page linters for the completion and docs tests,
#                              the container set for the container and deb tiers, and
#                              the MCP TypeScript SDK the MCP client test drives
#                              ward serve with (npm ci in tests/mcp-client, from its
#                              package-lock.json; the registry once, the cache after))
#   scripts/deps.sh deb        build + dpkg-dev, debhelper, lintian (`make deb`)
#   scripts/deps.sh bench      test + the peer sandboxes the benchmark compares with
#   scripts/deps.sh container  build + podman, runc, catatonit (the Pod's pause), mmdebstrap
#                              and eatmydata (the rootfs of `make test-container` and the deb tier)
#   scripts/deps.sh            the test set (as before the split)
#   scripts/deps.sh --list SET print the set's packages, install nothing
set -eu
# a package build (packaging/debian/rules) installs nothing
[ -n "${WARD_NO_DEPS:-}" ] && exit 0

BUILD="gcc make pkg-config libc6-dev libseccomp-dev libcap-dev libnl-3-dev libnl-route-3-dev
       libjansson-dev libssl-dev"
TEST="$BUILD check util-linux procps git python3 curl openssl iproute2 diffutils
      qemu-system-x86 busybox-static cpio openssh-server openssh-client
      clang libclang-rt-14-dev gnuplot-nox dash nodejs groff-base man-db mandoc
      bash-completion zsh fish
      podman runc catatonit mmdebstrap eatmydata"
DEB="$BUILD dpkg-dev debhelper lintian fakeroot groff-base"
BENCH="$TEST bubblewrap firejail crun hyperfine"
CONTAINER="$BUILD podman runc catatonit mmdebstrap eatmydata"

list=""
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
case ${1:-test} in
build | demo) PKGS=$BUILD ;;
test) PKGS=$TEST ;;
deb) PKGS=$DEB ;;
bench) PKGS=$BENCH ;;
container) PKGS=$CONTAINER ;;
*)
	echo "deps: unknown set '$1' (build, demo, test, deb, bench, container)" >&2
	exit 2
	;;
esac
if [ -n "$list" ]; then
	# shellcheck disable=SC2086
	printf '%s\n' $PKGS
	exit 0
fi

# The npm packages of the test set (tests/mcp-client), after the Debian ones.
npm_deps() {
	case ${1:-test} in test | bench) ;; *) return 0 ;; esac
	dir=$(cd "$(dirname "$0")/.." && pwd)/tests/mcp-client
	[ -f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" ] && return 0
	echo "deps: npm ci in $dir" >&2
	(cd "$dir" && npm ci --no-audit --no-fund --prefer-offline >/dev/null)
}

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case $st in *" installed") ;; *) missing="$missing $p" ;; esac
done
# npm: Debian's package beside Debian's nodejs; NodeSource's nodejs has its own
case " $PKGS " in *" nodejs "*) command -v npm >/dev/null || missing="$missing npm" ;; esac
if [ -z "$missing" ]; then
	npm_deps "${1:-test}"
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run 'sudo scripts/deps.sh ${1:-test}' (or apt-get install them)" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
npm_deps "${1:-test}"
