#!/bin/bash
# bench/run.sh — `make bench`: every case as the calling user and, when that is
# root, again as uid 65534 (from a world-readable copy of the binaries, as
# tests/run.sh does), then the report and the chart.
#
#   QUICK=1   a smoke run (< 1 minute); the report goes under $B/bench/results
#   NOTE=...  a line added to the report (say, what else ran on the machine)
#   FROM=NAME the report and chart again from bench/results/NAME.tier*.tsv,
#             measuring nothing (after a change to the report's code)
#
# Both tiers run the same copies of ward and the driver. Exit status 1 when a
# row of ward itself failed (peers that fail are reported, not fatal).
set -euo pipefail
cd "$(dirname "$0")/.."
B=$(realpath "${B:-build}")
QUICK=${QUICK:-}
NOTE=${NOTE:-}
case $QUICK in "" | 0) QUICK= ;; *) QUICK=1 ;; esac

for f in "$B/ward" "$B/ward-tls" "$B/bench/ward-bench"; do
	[ -x "$f" ] || { echo "bench: '$f' is not built (run make bench)" >&2; exit 1; }
done
if ! command -v gnuplot >/dev/null; then
	echo "bench: gnuplot is not installed (make bench-deps)" >&2
	exit 1
fi

T=$(mktemp -d /tmp/ward-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
mkdir "$T/bin" "$T/me" "$T/plot"
cp "$B/ward" "$B/ward-tls" "$B/bench/ward-bench" bench/policy.json "$T/bin/"
chmod -R a+rX "$T"
tiers=()
files=()

if [ -n "${FROM:-}" ]; then
	name=$FROM
	out="$PWD/bench/results"
	for f in "$out/$name".tier*.tsv; do
		[ -f "$f" ] || { echo "bench: no '$out/$name.tier*.tsv'" >&2; exit 1; }
		t=$(awk -F'\t' '$1 == "info" && $2 == "tier" { print $3 }' "$f")
		tiers+=(--tier "${t:-?}=$f")
		files+=("$f")
	done
else
	name="$(date -u +%Y-%m-%d)-$(hostname -s)"
	if [ -n "$QUICK" ]; then
		out="$B/bench/results"
		quick=(--quick)
	else
		out="$PWD/bench/results"
		quick=()
	fi
	mkdir -p "$out"

	SAFE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	tier() { # name, directory, then the command prefix that sets the user
		local t=$1 dir=$2
		shift 2
		echo "== bench: tier $t" >&2
		# ward's state (run records, rate limits) in the tier's own directory,
		# removed with the rest: never the user's, never left in /tmp
		"$@" env -i PATH="$SAFE_PATH" HOME=/tmp XDG_STATE_HOME="$dir/state" LANG=C.UTF-8 \
			"$T/bin/ward-bench" tier --ward "$T/bin/ward" --policy "$T/bin/policy.json" \
			--dir "$dir" --out "$dir/tier.tsv" "${quick[@]}"
		printf 'info\ttier\t%s\n' "$t" >>"$dir/tier.tsv"
		tiers+=(--tier "$t=$dir/tier.tsv")
		files+=("$dir/tier.tsv")
	}

	me="uid $(id -u)"
	[ "$(id -u)" = 0 ] && me=root
	tier "$me" "$T/me"
	if [ "$(id -u)" = 0 ]; then
		mkdir "$T/nobody"
		chown 65534:65534 "$T/nobody"
		tier "uid 65534" "$T/nobody" setpriv --reuid=65534 --regid=65534 --clear-groups
	fi

	if commit=$(git rev-parse --short HEAD 2>/dev/null); then
		git diff --quiet HEAD -- . ':!bench/results' ':!bench/README.md' ||
			commit="$commit (with uncommitted changes)"
	else
		commit=unknown
	fi
	printf 'info\tcommit\t%s\n' "$commit" >>"$T/me/tier.tsv"
	[ -n "$NOTE" ] && printf 'info\tnote\t%s\n' "${NOTE//$'\t'/ }" >>"$T/me/tier.tsv"
	i=0
	for f in "${files[@]}"; do
		cp "$f" "$out/$name.tier$i.tsv"
		i=$((i + 1))
	done
fi

"$T/bin/ward-bench" report "${tiers[@]}" --md "$out/$name.md" --plot "$T/plot" \
	--png "$out/$name.png"
gnuplot "$T/plot/chart.gp"
if [ -z "$QUICK" ]; then
	cp "$out/$name.md" "$out/latest.md"
	cp "$out/$name.png" "$out/latest.png"
	sed -i "s|($name.png)|(latest.png)|" "$out/latest.md"
	# bench/README.md shows the latest full run, between its two markers.
	if grep -q '^<!-- bench:latest:begin -->$' bench/README.md; then
		awk -v summary="$T/plot/summary.md" '
			/^<!-- bench:latest:end -->$/ { skip = 0 }
			!skip { print }
			/^<!-- bench:latest:begin -->$/ {
				while ((getline line < summary) > 0) print line
				skip = 1
			}' bench/README.md >"$T/README.md"
		cat "$T/README.md" >bench/README.md
	fi
fi
echo "bench: $out/$name.md, $out/$name.png" >&2

# ward's own rows must have worked; a layer not built is "n/a", not a failure.
bad=$(awk -F'\t' '($1 == "case" && $4 == "ladder" && $6 ~ /^failed/) ||
	($1 == "rate" && $5 ~ /^failed/) || ($1 == "output" && $4 ~ /^failed/) ||
	($1 == "net" && $4 ~ /^failed/) { print FILENAME ": " $0 }' "${files[@]}")
if [ -n "$bad" ]; then
	echo "bench: rows of ward failed:" >&2
	printf '%s\n' "$bad" >&2
	exit 1
fi
