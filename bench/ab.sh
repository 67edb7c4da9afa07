#!/bin/bash
# bench/ab.sh OLD NEW [ROUNDS] [-- WARD-RUN-ARGS...] — what a change costs a
# command: two ward binaries (say, one built from main before the change and
# one after) run alternately, as the calling user and, when that is root,
# again as uid 65534 from world-readable copies. Default: `-- /bin/true`,
# 300 rounds, bench/policy.json (rate limits off).
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(realpath "${B:-build}")
if [ $# -lt 2 ]; then
	echo "usage: bench/ab.sh OLD-WARD NEW-WARD [ROUNDS] [-- WARD-RUN-ARGS...]" >&2
	exit 2
fi
old=$1 new=$2
shift 2
rounds=300
if [ $# -gt 0 ] && [ "$1" != -- ]; then
	rounds=$1
	shift
fi
for f in "$old" "$new" "$B/bench/ward-bench"; do
	[ -x "$f" ] || { echo "bench/ab.sh: '$f' is not an executable" >&2; exit 1; }
done
T=$(mktemp -d /tmp/ward-ab.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
cp "$old" "$T/old"
cp "$new" "$T/new"
cp "$B/bench/ward-bench" bench/policy.json "$T/"
mkdir "$T/work" "$T/work65534" "$T/state" "$T/state65534"
chown 65534:65534 "$T/work65534" "$T/state65534" 2>/dev/null || true
chmod -R a+rX "$T"

echo "== uid $(id -u)"
XDG_STATE_HOME=$T/state "$T/ward-bench" ab --old "$T/old" --new "$T/new" \
	--policy "$T/policy.json" --dir "$T/work" --rounds "$rounds" "$@"
if [ "$(id -u)" = 0 ]; then
	echo "== uid 65534"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env HOME=/tmp TMPDIR=/tmp XDG_STATE_HOME="$T/state65534" \
		"$T/ward-bench" ab --old "$T/old" --new "$T/new" --policy "$T/policy.json" \
		--dir "$T/work65534" --rounds "$rounds" "$@"
fi
