#!/bin/sh
# tests/container/rootfs.sh — print the path of the Debian 12 rootfs that the
# container tier (tests/container/run.sh, bench/serve-fleet.py) and the deb
# tier (scripts/test-readme.sh) run podman containers on; build it first
# when it is not cached.
#
# `mmdebstrap --variant=minbase bookworm` from the Debian mirror apt uses on
# this machine, plus what a new user's `apt install ./ward_*.deb`, `man ward`
# and tab completion need, so that the deb tier installs the package offline
# as on a fresh Debian 12 machine that has its dependencies. Cached under
# ${WARD_CONTAINER_CACHE:-~/.cache/ward-container}, one directory per package
# set (a change of the set builds a new one); a lock keeps two tiers from
# building it at once. About 180 MB; a minute or so to build (the download
# and dpkg; eatmydata spares dpkg's fsyncs when the host has it).
set -eu
CACHE=${WARD_CONTAINER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ward-container}
# ward's Depends (dpkg -I build/deb/ward_*.deb), man-db, bash-completion and
# sudo (the README's lines run as written)
INCLUDE=libc6,libcap2,libjansson4,libnl-3-200,libnl-route-3-200,libseccomp2,libssl3,man-db,bash-completion,sudo
ROOTFS=$CACHE/rootfs-bookworm-$(printf '%s' "$INCLUDE" | md5sum | cut -c1-8)
if [ -x "$ROOTFS/bin/sh" ]; then
	echo "$ROOTFS"
	exit 0
fi
for t in mmdebstrap flock; do
	command -v $t >/dev/null || { echo "rootfs: $t missing (scripts/deps.sh container)" >&2; exit 1; }
done
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
if [ ! -x "$ROOTFS/bin/sh" ]; then
	# the mirror of this machine's bookworm (main), else Debian's own
	mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' \
		'Codename: bookworm' 'Component: main' 2>/dev/null | head -1)
	set -- --quiet --variant=minbase --include="$INCLUDE" --aptopt='Acquire::Languages "none"'
	[ ! -d /usr/share/mmdebstrap/hooks/eatmydata ] || ! command -v eatmydata >/dev/null ||
		set -- "$@" --hook-dir=/usr/share/mmdebstrap/hooks/eatmydata
	rm -rf "$ROOTFS.tmp"
	echo "# building the rootfs with mmdebstrap from ${mirror:-http://deb.debian.org/debian} (cached in $ROOTFS)" >&2
	# stdin closed: mmdebstrap would read a sources.list from a pipe
	if ! mmdebstrap "$@" bookworm "$ROOTFS.tmp" "${mirror:-http://deb.debian.org/debian}" \
		</dev/null >"$CACHE/mmdebstrap.log" 2>&1; then
		tail -20 "$CACHE/mmdebstrap.log" >&2
		rm -rf "$ROOTFS.tmp"
		echo "rootfs: mmdebstrap failed (log: $CACHE/mmdebstrap.log)" >&2
		exit 1
	fi
	mv "$ROOTFS.tmp" "$ROOTFS"
fi
echo "$ROOTFS"
