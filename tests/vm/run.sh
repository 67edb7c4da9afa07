#!/bin/bash
# tests/vm/run.sh — ward's cgroup v2 tests in a throw-away VM: Debian's 6.1
# cloud kernel under qemu (TCG when there is no KVM), a busybox initramfs, a
# pure cgroup v2 hierarchy with every controller, Landlock ABI 2.
#
# Builds ward, the integration tests and their helpers static in "$B-vm"
# (STATIC_TESTS=1), boots the guest with them (tests/vm/run-vm.sh), runs
# tests/vm/guest.sh there as root, and prints the tests' output with one total
# line in Check's form at the end (for tests/run.sh).
#
#   B=build tests/vm/run.sh [TEST[:CASE]...]
# The default selection: the cgroup v2 tests (test-limits, with ward in a
# container's cgroup namespace: cgroup2-container), the core run tests,
# Landlock on the guest's ABI 2 (rights reported, writes refused, a minimum
# ABI above 2 refused), seccomp, and ward under an engine's seccomp profile
# (clone3 ENOSYS: the child moved into its v2 cgroup before it runs). Cases needing a newer Landlock ABI
# (landlock4/5/6) or gcc, git and python3 (devtools) skip with their reason:
# the guest's require list names none of those tags.
#
# Without qemu, or without root and no cached kernel, it prints "# SKIP vm"
# and succeeds — unless WARD_TEST_REQUIRE names vm (or all): then it fails.
# Env: WARD_VM_REQUIRE (the guest's WARD_TEST_REQUIRE), WARD_VM_CACHE (kernel
# cache, default ~/.cache/ward-vm), WARD_VM_CPUS (2), WARD_VM_TIMEOUT (600 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${B:-build}
VB="$B-vm"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(test-limits test-landlock-abi test-run:view test-run:pid1
	test-run:lifecycle test-run:io test-run:off test-fences:seccomp test-fences:landlock
	test-fences:errors test-fences:workloads test-sandbox-fences:seccomp-in-sandbox
	test-sandbox-fences:landlock-in-sandbox test-sandbox-fences:workloads
	test-container:engine-seccomp)
req=${WARD_VM_REQUIRE:-root,userns,landlock,seccomp,cgroup2}
export RUNVM_HOME=${WARD_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ward-vm}

skip() {
	case ",${WARD_TEST_REQUIRE:-}," in
	*,-vm,*) ;;
	*,vm,* | *,all,*) echo "# FAIL vm: required prerequisite missing: $1"; exit 1 ;;
	esac
	echo "# SKIP vm ($1)"
	exit 0
}
command -v qemu-system-x86_64 >/dev/null || skip "no qemu-system-x86_64 (scripts/deps.sh installs it)"
[ -x /bin/busybox ] || skip "no /bin/busybox (busybox-static)"
if [ "$(id -u)" != 0 ] && { [ ! -f "$RUNVM_HOME/vmlinuz" ] || [ ! -f "$RUNVM_HOME/base-2.cpio" ]; }; then
	skip "the guest kernel and initramfs are made once as root (tests/vm/run-vm.sh --setup)"
fi

targets=("$VB/ward" "$VB/ward-tls")
for t in "${tests[@]}"; do
	t="$VB/tests/integration/${t%%:*}"
	[[ " ${targets[*]} " == *" $t "* ]] || targets+=("$t")
done
for h in tests/helpers/*.c; do h=${h##*/}; targets+=("$VB/tests/helpers/${h%.c}"); done
# a make of its own: no sanitizer (static) and nothing else inherited from a calling make
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s B="$VB" STATIC_TESTS=1 SANITIZE= "${targets[@]}" >&2

files=(-f "$VB/ward:/opt/ward/build/ward" -f "tests/vm/guest.sh:/opt/ward/guest.sh")
for t in "${targets[@]:1}"; do files+=(-f "$t:/opt/ward/build/${t#"$VB"/}"); done

out=$(tests/vm/run-vm.sh -m 768M -c "${WARD_VM_CPUS:-2}" -t "${WARD_VM_TIMEOUT:-600}" "${files[@]}" \
	/bin/busybox sh /opt/ward/guest.sh "$req" "${tests[@]}" 2>&1) && rc=0 || rc=$?
n=0 f=0 e=0
while read -r c fl er; do n=$((n + c)) f=$((f + fl)) e=$((e + er)); done < <(
	printf '%s\n' "$out" | sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p')
# one summary line for tests/run.sh: the per-program ones are lowered
printf '%s\n' "$out" | sed 's/Checks: /checks: /'
if [ $rc -ne 0 ] && [ $f -eq 0 ] && [ $e -eq 0 ]; then
	echo "vm: the guest failed (status $rc)"
	e=$((e + 1))
fi
echo "vm total: Checks: $n, Failures: $f, Errors: $e"
[ $rc -eq 0 ]
