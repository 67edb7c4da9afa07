#!/bin/bash
# tests/run.sh [unit|integration|escape|fuzz|container|deb|vm|mutants|bench|all|tags] — run ward's test binaries and add up.
#
# Unit tests run once. Integration tests run as the invoking user and, when that
# is root, again as uid 65534 from a world-readable copy of the build tree (the
# checkout may sit under a 0700 home). WARD_TEST_REQUIRE lists prerequisites
# (tags) that must not be skipped: "all" is every tag the tier can have, "-tag"
# excuses one; a tag that belongs to the other tier (root, unpriv, cgroup1, …)
# is never required (tests/harness.c decides, not this script). `tests/run.sh
# tags` prints every tag the test binaries use, with its probe in each tier.
# The last line is the total: "tests: N passed, N failed, N skipped".
set -u
B=$(realpath "${B:-build}")
what=${1:-all}
pass=0 fail=0 skip=0 bins_failed=() why=() times=()

# ward serve counts every command against a rate limit (30 a minute by
# default), and ward run does when a policy sets one, kept under
# XDG_STATE_HOME. The suite runs ward hundreds of times: it gets a state
# directory of its own, never the user's, and a policy without limits (tests
# of the limits pass their own policy).
STATE=$(mktemp -d /tmp/ward-tests-state.XXXXXX)
chmod 755 "$STATE"
printf '{"rate_limit": {"per_minute": 0, "per_hour": 0}}\n' >"$STATE/policy.json"
printf '{"rate_limit": {"per_minute": 0, "per_hour": 0},\n "validators": {"enabled": false}}\n' \
	>"$STATE/fences.json"
chmod 644 "$STATE/policy.json" "$STATE/fences.json"
export WARD_POLICY=${WARD_POLICY:-$STATE/policy.json}
# tests of the sandbox's own layers through the CLI (harness_fences_policy_opt)
export WARD_TEST_FENCES_POLICY=$STATE/fences.json
export XDG_STATE_HOME=$STATE/state
trap 'rm -rf "$STATE"' EXIT

# The container and deb tiers run on a Debian rootfs that
# tests/container/rootfs.sh builds with mmdebstrap when it is not cached (a
# minute or two: the download and dpkg). The whole suite starts it now, in
# the background, so that a cold cache costs the tiers before those a share
# of the machine rather than its whole time; the tiers' own call of
# rootfs.sh waits on its lock and finds it built (or builds it, and says
# why it failed).
if [ "$what" = all ] && [ "$(id -u)" = 0 ] && command -v mmdebstrap >/dev/null; then
	tests/container/rootfs.sh >/dev/null 2>&1 </dev/null &
fi

run_one() { # label, then the command
	local label=$1 out rc n f e t0=$SECONDS
	shift
	echo "== $label"
	out=$("$@" 2>&1)
	rc=$?
	times+=("$((SECONDS - t0)) $label")
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
	if [ $rc -ne 0 ]; then
		bins_failed+=("$label")
		# the first failures, repeated at the end where a truncated log still shows them
		while IFS= read -r f; do why+=("$label: $f"); done < <(printf '%s\n' "$out" |
			grep -m3 -E ':[FE]:|^# FAIL' | cut -c1-300)
	fi
}

copy_build() { # a world-readable copy of the build tree for uid 65534, in $T
	T=$(mktemp -d /tmp/ward-tests.XXXXXX)
	trap 'rm -rf "$T" "$STATE"' EXIT
	chmod 755 "$T"
	cp -a "$B" "$T/build"
	chmod -R a+rX "$T"
}

as_65534() { # run a command as uid 65534 from the copy
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env HOME=/tmp TMPDIR=/tmp WARD_BUILD="$T/build" WARD_TEST_COPY=1 \
		XDG_STATE_HOME="$STATE/state-65534" "$@"
}

# tests/run.sh tags: what every tag of every test binary is in this tier (and
# in the uid-65534 tier when root): "ok", "missing: why", "n/a: why"; one
# line per tag and tier, the binaries that use it after.
if [ "$what" = tags ]; then
	{
		for t in "$B"/tests/unit/test-* "$B"/tests/integration/test-* "$B"/tests/escape/test-*; do
			[ -x "$t" ] || continue
			WARD_TEST_LIST_TAGS=1 WARD_BUILD="$B" "$t" 2>/dev/null |
				sed -n "s|^# TAG \([^ ]*\) \(.*\)|\1\tuid $(id -u)\t\2\t${t#"$B"/tests/}|p"
		done
		if [ "$(id -u)" = 0 ]; then
			copy_build
			for t in "$T"/build/tests/integration/test-* "$T"/build/tests/escape/test-*; do
				[ -x "$t" ] || continue
				as_65534 env WARD_TEST_LIST_TAGS=1 "$t" 2>/dev/null |
					sed -n "s|^# TAG \([^ ]*\) \(.*\)|\1\tuid 65534\t\2\t${t#"$T"/build/tests/}|p"
			done
		fi
	} | sort | awk -F'\t' '
		{ k = $1 "\t" $2 "\t" $3; if (!(k in bins)) { order[n++] = k; bins[k] = $4 } else bins[k] = bins[k] " " $4 }
		END { for (i = 0; i < n; i++) { split(order[i], f, "\t"); printf "%-10s %-10s %-60s %s\n", f[1], f[2], f[3], bins[order[i]] } }'
	exit 0
fi

if [ "$what" = all ] || [ "$what" = unit ]; then
	for t in "$B"/tests/unit/test-*; do
		[ -x "$t" ] && run_one "unit/${t##*/}" "$t"
	done
fi

# The integration tier and the escape tier (hostile probes) run alike: as the
# invoking user, then as uid 65534 when that is root.
tiers=()
case $what in
all) tiers=(integration escape) ;;
integration | escape) tiers=("$what") ;;
esac
if [ ${#tiers[@]} -gt 0 ]; then
	for tier in "${tiers[@]}"; do
		for t in "$B"/tests/$tier/test-*; do
			[ -x "$t" ] && run_one "$tier/${t##*/} (uid $(id -u))" env WARD_BUILD="$B" "$t"
		done
	done
	if [ "$(id -u)" = 0 ]; then
		copy_build
		mkdir -p "$STATE/state-65534" && chown 65534:65534 "$STATE/state-65534"
		for tier in "${tiers[@]}"; do
			for t in "$T"/build/tests/$tier/test-*; do
				[ -x "$t" ] || continue
				run_one "$tier/${t##*/} (uid 65534)" as_65534 "$t"
			done
		done
	fi
fi

# The libFuzzer targets, each for a bounded time (WARD_FUZZ_TIME seconds,
# default 20) over a scratch copy of its seed corpora, all at once (each is
# one process; the suite's budget is wall time): one pass or one failure
# each. A crash's input is printed (libFuzzer's Base64 line) and left in
# the scratch directory only until it is read.
fuzz_start() { # name, then the seed directories
	local name=$1 fz="$B/fuzz/fuzz-$1" fc
	shift
	if [ ! -x "$fz" ]; then
		echo "# FAIL fuzz/$name: $fz not built (make check builds it)"
		fail=$((fail + 1))
		bins_failed+=("fuzz/$name")
		return
	fi
	fc=$(mktemp -d /tmp/ward-fuzz.XXXXXX)
	mkdir "$fc/corpus"
	fuzz_dirs+=("$name $fc")
	("$fz" -max_total_time="${WARD_FUZZ_TIME:-20}" -max_len=4096 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$fc/" \
		"$fc/corpus" "$@" >"$fc/out" 2>&1
	 echo $? >"$fc/rc") &
}

fuzz_finish() { # every target started: wait, then add up
	local t0=$1 entry name fc frc
	wait
	for entry in "${fuzz_dirs[@]}"; do
		name=${entry%% *} fc=${entry#* }
		frc=$(cat "$fc/rc" 2>/dev/null || echo 1)
		echo "== fuzz/$name (${WARD_FUZZ_TIME:-20} s)"
		grep -E '^(Done|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' "$fc/out"
		if [ "$frc" -eq 0 ]; then
			pass=$((pass + 1))
		else
			tail -40 "$fc/out"
			fail=$((fail + 1))
			bins_failed+=("fuzz/$name")
			why+=("fuzz/$name: $(grep -m1 -E 'runtime error|==ERROR' "$fc/out" | cut -c1-250)")
		fi
		rm -rf "$fc"
	done
	times+=("$((SECONDS - t0)) fuzz (all targets at once)")
}

if [ "$what" = all ] || [ "$what" = fuzz ]; then
	fuzz_dirs=()
	t0=$SECONDS
	fuzz_start shparse tests/fuzz/shparse
	# the validators: their seeds, then the parser's
	fuzz_start validate tests/fuzz/validate tests/fuzz/shparse
	# the git index reader, over indexes git wrote
	fuzz_start gitindex tests/fuzz/gitindex
	# the proxy's HTTP parsers (plain and inside intercepted TLS)
	fuzz_start http tests/fuzz/http
	# the proxy's rules on a request, over requests with stand-ins
	fuzz_start netrules tests/fuzz/netrules
	fuzz_finish $t0
fi

# ward inside podman containers (tests/container/run.sh) over a Debian
# rootfs (tests/container/rootfs.sh builds it with mmdebstrap when it is not
# cached): "ok -" lines are passes, "not ok -" failures; without podman,
# mmdebstrap or root it says "# SKIP container", which WARD_TEST_REQUIRE
# turns into a failure when it names container (or all without -container).
if [ "$what" = all ] || [ "$what" = container ]; then
	if [ -x tests/container/run.sh ]; then
		echo "== container (podman)"
		t0=$SECONDS
		cout=$(B="$B" tests/container/run.sh 2>&1)
		crc=$?
		times+=("$((SECONDS - t0)) container")
		printf '%s\n' "$cout"
		pass=$((pass + $(printf '%s\n' "$cout" | grep -c '^ok - ')))
		fail=$((fail + $(printf '%s\n' "$cout" | grep -c '^not ok - ')))
		if printf '%s\n' "$cout" | grep -q '^# SKIP container'; then
			skip=$((skip + 1))
			case ",${WARD_TEST_REQUIRE:-}," in
			*,-container,*) ;;
			*,container,* | *,all,*) fail=$((fail + 1)) ;;
			esac
		fi
		if [ $crc -ne 0 ]; then
			bins_failed+=("container")
			while IFS= read -r f; do why+=("container: $f"); done < <(printf '%s\n' "$cout" |
				grep -m3 '^not ok - ' | cut -c1-300)
		fi
	fi
fi

# The Debian packages: the README's install block and quick starts run as
# written (scripts/test-readme.sh install: its `make deb` — dpkg-buildpackage,
# lintian — here, then apt install, man, completion, the terminal and MCP
# quick starts in a fresh Debian 12 root under podman, the rootfs the
# container tier uses), then the packages installed into an empty dpkg root,
# purged, and a program built against libward (scripts/test-deb.sh): "ok -"
# lines are passes; a failure stops the script with its reason.
if [ "$what" = all ] || [ "$what" = deb ]; then
	echo "== deb (the README's install and quick starts, scripts/test-deb.sh)"
	if [ "$(id -u)" != 0 ]; then
		echo "# SKIP deb (root: dpkg --root, podman and the build dependencies)"
		skip=$((skip + 1))
		case ",${WARD_TEST_REQUIRE:-}," in
		*,-deb,*) ;;
		*,deb,* | *,all,*) fail=$((fail + 1)) bins_failed+=("deb") ;;
		esac
	else
		t0=$SECONDS
		dout=$(B="$B" scripts/test-readme.sh install 2>&1 &&
			scripts/test-deb.sh "$B/deb" 2>&1)
		drc=$?
		times+=("$((SECONDS - t0)) deb")
		rm -rf "${B:?}/deb" # a copy of the tree and its build: not for the tiers after
		printf '%s\n' "$dout" | grep -E '^(ok - |not ok - |test-deb: |deb: |E: |W: )' || true
		pass=$((pass + $(printf '%s\n' "$dout" | grep -c '^ok - ')))
		if [ $drc -ne 0 ]; then
			printf '%s\n' "$dout" | tail -30
			fail=$((fail + 1))
			bins_failed+=("deb")
			why+=("deb: $(printf '%s\n' "$dout" | grep -m1 -E '^not ok - |FAIL|error|E: ' | cut -c1-300)")
		fi
	fi
fi

if [ "$what" = all ] || [ "$what" = vm ]; then
	if [ -x tests/vm/run.sh ]; then
		run_one "vm (cgroup v2 guest)" tests/vm/run.sh
	fi
fi

# The mutation tier (scripts/mutants.sh): each mutant of tests/mutants/list,
# one defence removed from a scratch copy, must make its tests fail; each
# caught mutant is a pass, each missed one a failure. It needs root (its
# tests drop to uid 65534 in mount namespaces of their own).
if [ "$what" = all ] || [ "$what" = mutants ]; then
	echo "== mutants"
	if [ "$(id -u)" != 0 ]; then
		echo "# SKIP mutants (root: the mutation tier runs as root)"
		case ",${WARD_TEST_REQUIRE:-}," in
		*,all,* | *,root,*) fail=$((fail + 1)) bins_failed+=("mutants") ;;
		esac
	else
		t0=$SECONDS
		mout=$(B="$B" "$(dirname "$0")/../scripts/mutants.sh" 2>&1)
		mrc=$?
		times+=("$((SECONDS - t0)) mutants")
		printf '%s\n' "$mout"
		if [[ $mout =~ mutants:\ ([0-9]+)\ caught,\ ([0-9]+)\ missed ]]; then
			pass=$((pass + BASH_REMATCH[1]))
			fail=$((fail + BASH_REMATCH[2]))
		fi
		if [ $mrc -ne 0 ]; then
			bins_failed+=("mutants")
			# what went wrong first (a missed mutant and its last lines, a
			# failed baseline); a caught mutant's failures are its success
			while IFS= read -r f; do why+=("mutants: $f"); done < <(printf '%s\n' "$mout" |
				grep -m8 -A5 -E '^# FAIL|^MISSED' | cut -c1-300)
			[[ $mout =~ mutants:\ [0-9]+\ caught ]] || fail=$((fail + 1))
		fi
	fi
fi

# The benchmark's smoke run: the README's bench quick start as written, with
# QUICK=1 (scripts/test-readme.sh bench): every row of ward must run; one
# pass or one failure.
if [ "$what" = all ] || [ "$what" = bench ]; then
	echo "== bench (the README's quick start, QUICK=1)"
	t0=$SECONDS
	B="$B" "$(dirname "$0")/../scripts/test-readme.sh" bench
	brc=$?
	times+=("$((SECONDS - t0)) bench")
	if [ $brc -eq 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		bins_failed+=("bench")
	fi
fi

# where the suite's time goes (CI has a budget): the slowest binaries
if [ ${#times[@]} -gt 0 ]; then
	echo "slowest (s): $(printf '%s\n' "${times[@]}" | sort -rn | head -8 | tr '\n' ',' |
		sed 's/,$//; s/,/, /g')"
fi
echo "total: $SECONDS s"
if [ ${#bins_failed[@]} -gt 0 ]; then
	echo "failed: ${bins_failed[*]}"
	[ ${#why[@]} -eq 0 ] || printf '  %s\n' "${why[@]}"
fi
echo "tests: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] && [ ${#bins_failed[@]} -eq 0 ]
