#!/bin/bash
# tests/run.sh [unit|integration|fuzz|vm|bench|all] — run ward's test binaries and add up.
#
# Unit tests run once. Integration tests run as the invoking user and, when that
# is root, again as uid 65534 from a world-readable copy of the build tree (the
# checkout may sit under a 0700 home). WARD_TEST_REQUIRE lists prerequisites
# that must not be skipped; for the uid-65534 tier the root-only ones are
# dropped from it. The last line is the total: "tests: N passed, N failed, N skipped".
set -u
B=$(realpath "${B:-build}")
what=${1:-all}
pass=0 fail=0 skip=0 bins_failed=()

run_one() { # label, then the command
	local label=$1 out rc n f e
	shift
	echo "== $label"
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	if [[ $out =~ Checks:\ ([0-9]+),\ Failures:\ ([0-9]+),\ Errors:\ ([0-9]+) ]]; then
		n=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} e=${BASH_REMATCH[3]}
		pass=$((pass + n - f - e))
		fail=$((fail + f + e))
	elif [ $rc -ne 0 ]; then
		fail=$((fail + 1))
	fi
	skip=$((skip + $(printf '%s\n' "$out" | grep -c '^# SKIP')))
	fail=$((fail + $(printf '%s\n' "$out" | grep -c '^# FAIL')))
	if [ $rc -ne 0 ]; then bins_failed+=("$label"); fi
}

drop_root_only() { # the require list without what only root can have
	local out="" t
	IFS=, read -ra tags <<<"${WARD_TEST_REQUIRE:-}"
	for t in "${tags[@]}"; do
		case $t in root | cgroup1 | cgroup2 | netadmin | vm) ;; *) out+="${out:+,}$t" ;; esac
	done
	echo "$out"
}

if [ "$what" = all ] || [ "$what" = unit ]; then
	for t in "$B"/tests/unit/test-*; do
		[ -x "$t" ] && run_one "unit/${t##*/}" "$t"
	done
fi

if [ "$what" = all ] || [ "$what" = integration ]; then
	for t in "$B"/tests/integration/test-*; do
		[ -x "$t" ] && run_one "integration/${t##*/} (uid $(id -u))" env WARD_BUILD="$B" "$t"
	done
	if [ "$(id -u)" = 0 ]; then
		T=$(mktemp -d /tmp/ward-tests.XXXXXX)
		trap 'rm -rf "$T"' EXIT
		chmod 755 "$T"
		cp -a "$B" "$T/build"
		chmod -R a+rX "$T"
		req=$(drop_root_only)
		for t in "$T"/build/tests/integration/test-*; do
			[ -x "$t" ] || continue
			run_one "integration/${t##*/} (uid 65534)" \
				setpriv --reuid=65534 --regid=65534 --clear-groups \
				env HOME=/tmp TMPDIR=/tmp WARD_BUILD="$T/build" WARD_TEST_REQUIRE="$req" "$t"
		done
	fi
fi

# The parser's libFuzzer target for a bounded time (WARD_FUZZ_TIME seconds,
# default 20) over a scratch copy of the seed corpus: one pass or one failure.
if [ "$what" = all ] || [ "$what" = fuzz ]; then
	fz="$B/fuzz/fuzz-shparse"
	echo "== fuzz/shparse (${WARD_FUZZ_TIME:-20} s)"
	if [ -x "$fz" ]; then
		FC=$(mktemp -d /tmp/ward-fuzz.XXXXXX)
		fout=$("$fz" -max_total_time="${WARD_FUZZ_TIME:-20}" -max_len=4096 -timeout=10 \
			-rss_limit_mb=2048 -print_final_stats=1 "$FC" tests/fuzz/shparse 2>&1)
		frc=$?
		rm -rf "$FC"
		printf '%s\n' "$fout" | grep -E '^(Done|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' 
		if [ $frc -eq 0 ]; then
			pass=$((pass + 1))
		else
			printf '%s\n' "$fout" | tail -40
			fail=$((fail + 1))
			bins_failed+=("fuzz/shparse")
		fi
	else
		echo "# FAIL fuzz/shparse: $fz not built (make check builds it)"
		fail=$((fail + 1))
	fi
fi

if [ "$what" = all ] || [ "$what" = vm ]; then
	if [ -x tests/vm/run.sh ]; then
		run_one "vm (cgroup v2 guest)" tests/vm/run.sh
	fi
fi

# The benchmark's smoke run (bench/run.sh, QUICK=1): every row of ward must
# run; one pass or one failure.
if [ "$what" = all ] || [ "$what" = bench ]; then
	echo "== bench (QUICK=1)"
	if B="$B" QUICK=1 "$(dirname "$0")/../bench/run.sh"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		bins_failed+=("bench")
	fi
fi

if [ ${#bins_failed[@]} -gt 0 ]; then
	echo "failed: ${bins_failed[*]}"
fi
echo "tests: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] && [ ${#bins_failed[@]} -eq 0 ]
