#!/bin/bash
# scripts/mutants.sh [LIST [NAME...]] — the mutation tier (make test-mutants).
#
# Each line of LIST (default tests/mutants/list) removes one defence from a
# copy of the sources; the tests it names must then fail. For every mutant,
# one at a time and with every other layer intact: apply the mutation (its
# text must match exactly once, or the tier fails loudly: a refactor cannot
# silently disable a mutant), build incrementally in the scratch tree, run
# the named tests, restore the file. A mutant whose tests still pass is
# "missed" and fails the tier. The unmutated scratch tree runs every named
# test first: a test that fails there proves nothing about a mutant.
#
# Nothing outside the scratch tree (/tmp/ward-mutants.*) is touched: the
# sources are copied, the build directory too (so each mutant is an
# incremental build), and every test runs in a throw-away mount namespace
# (unshare -m), as uid 65534 unless its line says root — a mutant with a
# writable view or no Landlock then meets only what uid 65534 may write.
# Root lines name tests that write only where they own the place (a tmpfs
# of their own mount namespace, their own cgroup).
#
# LIST format, one mutant a line, fields separated by " | ":
#   name | file | text to find | replacement | uid (65534 or root) | tests
# where text and replacement are taken literally except for \n and \t, and
# tests are tier/binary[:tcase] of the build tree, space-separated (a tcase
# runs alone through CK_RUN_CASE). Lines starting with # are comments.
# NAME... runs only those mutants. Prints one line per mutant: caught or
# MISSED, with its time.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
LIST=${1:-tests/mutants/list}
shift || true
only=("$@")
B=${B:-build}

if [ "$(id -u)" != 0 ]; then
	echo "mutants: run as root (tests run as uid 65534 in a mount namespace of their own)" >&2
	exit 1
fi
[ -f "$B/ward" ] || { echo "mutants: no $B/ward: run make check first" >&2; exit 1; }

S=$(mktemp -d /tmp/ward-mutants.XXXXXX)
trap 'rm -rf "$S"' EXIT
# never an exit without its reason (set -e ends the script at any failed command)
trap 'echo "# FAIL mutants: scripts/mutants.sh stopped at line $LINENO (status $?)"' ERR
chmod 755 "$S"
mkdir -p "$S/src" "$S/tmp" "$S/state" "$S/state-65534"
chmod 1777 "$S/tmp"
chown 65534:65534 "$S/state-65534"
# the sources (not the VCS, not other build trees), then the build tree
tar --exclude=./.git --exclude="./$B" --exclude='./build*' -cf - . | tar -C "$S/src" -xf -
cp -a "$B" "$S/src/build"
chmod -R a+rX "$S/src"
printf '{"rate_limit": {"per_minute": 0, "per_hour": 0}}\n' >"$S/policy.json"
printf '{"rate_limit": {"per_minute": 0, "per_hour": 0},\n "validators": {"enabled": false}}\n' \
	>"$S/fences.json"
chmod 644 "$S/policy.json" "$S/fences.json"

# run_test uid spec: one test binary (one tcase of it) of the scratch build
run_test() {
	local uid=$1 spec=$2 bin case= state=$S/state
	bin=$S/src/build/tests/${spec%%:*}
	[[ $spec == *:* ]] && case=${spec#*:}
	[ -x "$bin" ] || { echo "mutants: no test binary '$spec'" >&2; return 2; }
	local run=(env -u CK_RUN_CASE HOME=/tmp TMPDIR="$S/tmp" WARD_BUILD="$S/src/build"
		WARD_TEST_COPY=1 WARD_POLICY="$S/policy.json" WARD_TEST_FENCES_POLICY="$S/fences.json"
		CK_TIMEOUT_MULTIPLIER=0.5)
	# Check takes an empty CK_RUN_CASE for a case named "": set it only to select one
	[ -n "$case" ] && run+=(CK_RUN_CASE="$case")
	if [ "$uid" = root ]; then
		unshare --mount --propagation private "${run[@]}" XDG_STATE_HOME="$state" \
			timeout 300 "$bin"
	else
		unshare --mount --propagation private \
			setpriv --reuid=65534 --regid=65534 --clear-groups \
			"${run[@]}" XDG_STATE_HOME="$S/state-65534" timeout 300 "$bin"
	fi
}

# apply file find replace: the find text must occur exactly once
apply() {
	python3 - "$@" <<'PY'
import sys
path, find, repl = sys.argv[1], sys.argv[2], sys.argv[3]
un = lambda s: s.replace('\\n', '\n').replace('\\t', '\t').replace('\\|', '|')
find, repl = un(find), un(repl)
text = open(path).read()
n = text.count(find)
if n != 1:
    sys.exit("mutation does not apply: %d matches of %r in %s" % (n, find, path))
open(path, 'w').write(text.replace(find, repl))
PY
}

names=() files=() finds=() repls=() uids=() tests=()
# fields split at " | " (a "|" in a text is written "\|"); \x1f between them
while IFS=$'\x1f' read -r name file find repl uid specs; do
	if [ -z "$name" ] || [ -z "$specs" ] || [ ! -f "$S/src/$file" ] ||
		{ [ "$uid" != root ] && [ "$uid" != 65534 ]; }; then
		echo "mutants: bad line in $LIST: $name | $file | … | $uid | $specs" >&2
		exit 1
	fi
	if [ ${#only[@]} -gt 0 ] && [[ " ${only[*]} " != *" $name "* ]]; then continue; fi
	names+=("$name") files+=("$file") finds+=("$find") repls+=("$repl") uids+=("$uid")
	tests+=("$specs")
done < <(python3 - "$LIST" <<'PY'
import re, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    line = line.rstrip('\n')
    if not line.strip() or line.lstrip().startswith('#'):
        continue
    f = [x.strip() for x in re.split(r' (?<!\\)\| ', line)]
    if len(f) != 6:
        sys.exit("mutants: line %d has %d fields, not 6: %s" % (n, len(f), line))
    f[5] = ' '.join(f[5].split())
    print('\x1f'.join(f))
PY
)
[ ${#names[@]} -gt 0 ] || { echo "mutants: no mutant to run" >&2; exit 1; }

cd "$S/src"
echo "== mutants: ${#names[@]} from $LIST, scratch tree $S"
# Every mutation must apply to the sources as they are, before anything runs.
for i in "${!names[@]}"; do
	cp -p "${files[$i]}" "$S/orig"
	if ! apply "${files[$i]}" "${finds[$i]}" "${repls[$i]}"; then
		echo "# FAIL mutant ${names[$i]}: its text is not in ${files[$i]} exactly once"
		exit 1
	fi
	cp -p "$S/orig" "${files[$i]}"
done

# The unmutated tree, built (the copied build tree may be older than the
# sources), passes every test named (else a "catch" means nothing).
targets=(build/ward build/ward-tls)
for i in "${!names[@]}"; do
	for t in ${tests[$i]}; do targets+=("build/tests/${t%%:*}"); done
done
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j2 B=build $(printf '%s\n' "${targets[@]}" | sort -u) \
	>"$S/build.log" 2>&1; then
	tail -20 "$S/build.log"
	echo "# FAIL mutants: the unmutated scratch tree does not build"
	exit 1
fi
chmod -R a+rX build
declare -A baseline=()
start=$SECONDS
for i in "${!names[@]}"; do
	for t in ${tests[$i]}; do
		key="${uids[$i]} $t"
		[ -n "${baseline[$key]:-}" ] && continue
		baseline[$key]=1
		if ! run_test "${uids[$i]}" "$t" >"$S/log" 2>&1; then
			# once more: a test that fails only now and then is reported,
			# one that fails twice without a mutant proves nothing
			echo "mutants: '$t' (uid ${uids[$i]}) failed unmutated; once more:"
			{ grep -m3 -E ':[FE]:|^# FAIL|Timeout' "$S/log" || tail -3 "$S/log"; } |
				cut -c1-300 | sed 's/^/        /'
			if ! run_test "${uids[$i]}" "$t" >"$S/log" 2>&1; then
				tail -30 "$S/log"
				echo "# FAIL mutants: '$t' (uid ${uids[$i]}) fails without any mutant"
				exit 1
			fi
		fi
		# a test that runs nothing (a case renamed, a tag skipped) catches nothing
		if ! grep -qE 'Checks: [1-9]' "$S/log" || grep -q '^# SKIP' "$S/log"; then
			tail -30 "$S/log"
			echo "# FAIL mutants: '$t' (uid ${uids[$i]}) runs no test or skips some"
			exit 1
		fi
	done
done
echo "baseline: ${#baseline[@]} test runs pass unmutated ($((SECONDS - start)) s)"

missed=0
for i in "${!names[@]}"; do
	start=$SECONDS
	f=${files[$i]}
	cp -p "$f" "$S/orig"
	apply "$f" "${finds[$i]}" "${repls[$i]}"
	# the CLI only for tests that may run it (a unit test links the
	# library alone, and relinking ward costs seconds a mutant)
	targets=()
	for t in ${tests[$i]}; do
		targets+=("build/tests/${t%%:*}")
		[ "${t#unit/}" != "$t" ] || targets+=(build/ward build/ward-tls)
	done
	if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -j2 B=build "${targets[@]}" \
		>"$S/build.log" 2>&1; then
		tail -20 "$S/build.log"
		echo "# FAIL mutant ${names[$i]}: does not build"
		exit 1
	fi
	chmod -R a+rX build
	caught="" why=""
	: >"$S/all.log"
	for t in ${tests[$i]}; do
		if ! run_test "${uids[$i]}" "$t" >"$S/log" 2>&1; then
			caught+="${caught:+ }$t"
			# the first failure Check reports: which test caught it, and why
			why+=$({ grep -m1 -E ':[FE]:|^# FAIL|Timeout' "$S/log" || tail -1 "$S/log"; } |
				cut -c1-200 | sed 's/^/\n        /')
		fi
		cat "$S/log" >>"$S/all.log"
	done
	# back to the original text, newer than the mutant's objects
	cp "$S/orig" "$f"
	touch "$f"
	if [ -n "$caught" ]; then
		printf 'caught  %-34s %4d s  by %s%b\n' "${names[$i]}" $((SECONDS - start)) "$caught" \
			"$why"
	else
		printf 'MISSED  %-34s %4d s  (%s)\n' "${names[$i]}" $((SECONDS - start)) "${tests[$i]}"
		tail -5 "$S/all.log" | sed 's/^/        /' 
		missed=$((missed + 1))
	fi
done
echo "mutants: $((${#names[@]} - missed)) caught, $missed missed"
[ $missed -eq 0 ] || exit 1
