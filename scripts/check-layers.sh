#!/bin/bash
# scripts/check-layers.sh [BUILD_DIR] — the folders of runtime/, filters/ and
# landlock/ are the module graph; this checks that it stays one (make
# check-layers; make test runs it first).
#
# The layers, top to bottom (a folder may use its own layer and those below,
# never one above):
#
#   5  runtime/cli                                 the command line, not in libward
#   4  runtime/session                             sessions over the core
#   4  runtime/tls                                 the TLS helper program, ward-tls,
#                                                  not in libward
#   3  runtime/core runtime/net runtime/workdir runtime/cgroup
#   2  filters/shell filters/validate filters/seccomp landlock
#   1  runtime/util                                errors, cleanup, host paths
#
# It fails, naming file, line and what is wrong, on
#   - a source or header in no folder of the table;
#   - an #include "runtime/…", "filters/…" or "landlock/…" that points up;
#   - an include of another folder's file other than its one internal header
#     (<folder>/<name>-internal.h, e.g. runtime/workdir/workdir-internal.h);
#   - with BUILD_DIR: an object that calls (or reads) a symbol defined in a
#     folder above its own (public headers declare for every layer, so the
#     symbols are where a call upward shows);
#   - a cycle between folders, through includes or symbols (same-layer
#     folders may use each other one way only).
# The public headers (include/ward/*.h) are not layered: they are the
# library's API, and what is called through them is checked at the symbols.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-}

declare -A rank=(
	[runtime/cli]=5
	[runtime/session]=4 [runtime/tls]=4
	[runtime/core]=3 [runtime/net]=3 [runtime/workdir]=3 [runtime/cgroup]=3
	[filters/shell]=2 [filters/validate]=2 [filters/seccomp]=2 [landlock]=2
	[runtime/util]=1
)
ORDER="cli → session/tls → core/net/workdir/cgroup → filters/landlock → util"
fail=0
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT

# the folder a path belongs to, in $dir: its directory, a gen/ subfolder
# counted as its parent's (the build-time generators)
folder_of() {
	dir=${1%/*}
	dir=${dir%/gen}
}

bad() {
	echo "check-layers: $*" >&2
	fail=1
}

files=$(find runtime filters landlock -name '*.[ch]' | sort)
for f in $files; do
	folder_of "$f"
	[ -n "${rank[$dir]:-}" ] ||
		bad "$f: in no layer (folder '$dir' is not in scripts/check-layers.sh's table)"
done

# every #include of a folder's file: file, line, the included path
while read -r f line inc; do
	folder_of "$f"
	from=$dir
	folder_of "$inc"
	to=$dir
	[ -n "${rank[$from]:-}" ] || continue
	if [ -z "${rank[$to]:-}" ]; then
		bad "$f:$line: #include \"$inc\": folder '$to' is in no layer"
		continue
	fi
	[ "$to" = "$from" ] && continue
	echo "$from $to $f:$line #include \"$inc\"" >>"$edges"
	if [ "${rank[$to]}" -gt "${rank[$from]}" ]; then
		bad "$f:$line: #include \"$inc\" points up: $from (layer ${rank[$from]}) may not use $to (layer ${rank[$to]}); includes point down $ORDER"
	fi
	if [ "$inc" != "$to/${to##*/}-internal.h" ]; then
		bad "$f:$line: #include \"$inc\": another folder is used through its one header, $to/${to##*/}-internal.h"
	fi
done < <(awk '/^[ \t]*#[ \t]*include[ \t]*"(runtime|filters|landlock)\// {
		l = $0; sub(/^[^"]*"/, "", l); sub(/".*/, "", l); print FILENAME, FNR, l }' $files)

# The symbols: who defines what, in the objects of the build tree.
if [ -n "$B" ]; then
	# the objects of today's sources only: a build tree may hold some of
	# files since moved or removed
	objs=$(for f in $(find runtime filters landlock -name '*.c' | sort); do
		[ -f "$B/${f%.c}.o" ] && echo "${f%.c}.o"; done)
	[ -n "$objs" ] || { echo "check-layers: no objects under '$B' (make check first)" >&2; exit 1; }
	ranks=$(for k in "${!rank[@]}"; do printf '%s=%s ' "$k" "${rank[$k]}"; done)
	# one edge line per object and symbol, and a complaint per upward use
	(cd "$B" && nm -A $objs) | awk -v ranks="$ranks" -v B="$B" -v order="$ORDER" -v edges="$edges" '
		function folder(p) { sub(/\/[^\/]*$/, "", p); sub(/\/gen$/, "", p); return p }
		BEGIN { n = split(ranks, r, " "); for (i = 1; i <= n; i++) { split(r[i], kv, "="); rank[kv[1]] = kv[2] } }
		{ split($1, a, ":"); obj = a[1] }
		NF == 3 && $2 ~ /^[TDRBV]$/ { owner[$3] = folder(obj) }
		NF == 3 && $2 == "U" { m++; uo[m] = obj; us[m] = $3 }
		END {
			for (i = 1; i <= m; i++) {
				s = us[i]; from = folder(uo[i])
				if (!(s in owner) || owner[s] == from) continue
				to = owner[s]
				print from, to, B "/" uo[i], "uses", s >> edges
				if (!(from in rank)) { print "check-layers: " B "/" uo[i] ": objects in no layer"; bad = 1 }
				else if (rank[to] > rank[from]) {
					printf "check-layers: %s/%s uses %s, defined in %s: %s (layer %d) may not use %s (layer %d); calls point down %s\n", B, uo[i], s, to, from, rank[from], to, rank[to], order
					bad = 1
				}
			}
			exit bad
		}' >&2 || fail=1
fi

# A cycle between folders: tsort names one; the edges that make it follow.
if ! loop=$(awk '{ print $1, $2 }' "$edges" | sort -u | tsort 2>&1 >/dev/null) || [ -n "$loop" ]; then
	members=$(printf '%s\n' "$loop" | sed -n 's/^tsort: \([^ ]*\)$/\1/p' | sort -u)
	bad "a cycle between folders: $(echo $members)"
	for a in $members; do
		for b in $members; do
			awk -v a="$a" -v b="$b" '$1 == a && $2 == b { $1 = ""; $2 = ""; print "  " a " -> " b ":" $0; exit }' "$edges" >&2
		done
	done
fi

if [ $fail -ne 0 ]; then
	echo "check-layers: FAILED" >&2
	exit 1
fi
echo "check-layers: $(echo $files | wc -w) files in ${#rank[@]} folders, $(awk '{ print $1, $2 }' "$edges" | sort -u | wc -l) folder edges, all pointing down ($ORDER), no cycle"
