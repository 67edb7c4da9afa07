#!/bin/sh
# tests/vm/guest.sh REQUIRE TEST[:CASE]... — inside the VM (busybox sh, pure
# cgroup v2, as root): run each integration test program of /opt/ward/build
# (only its test case CASE when given) with WARD_TEST_REQUIRE=REQUIRE, print
# their output; exit 1 if any failed.
req=$1
shift
export WARD_BUILD=/opt/ward/build WARD_TEST_REQUIRE="$req" HOME=/root TMPDIR=/tmp PATH=/bin
echo "vm: kernel $(uname -r), cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
cd /tmp || exit 1
rc=0
for t in "$@"; do
	echo "== vm/$t"
	case $t in
	*:*) CK_RUN_CASE=${t#*:} "$WARD_BUILD/tests/integration/${t%%:*}" 2>&1 || rc=1 ;;
	*) "$WARD_BUILD/tests/integration/$t" 2>&1 || rc=1 ;;
	esac
done
exit $rc
