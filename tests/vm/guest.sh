#!/bin/sh
# tests/vm/guest.sh REQUIRE TEST[:CASE]... — inside the VM (busybox sh, pure
# cgroup v2, as root): run each integration test program of /opt/ward/build
# (only its test case CASE when given) with WARD_TEST_REQUIRE=REQUIRE, print
# their output; exit 1 if any failed.
req=$1
shift
export WARD_BUILD=/opt/ward/build WARD_TEST_REQUIRE="$req" HOME=/root TMPDIR=/tmp PATH=/bin
# Debian 12's 6.1 kernel has Landlock ABI 2: test-landlock-abi checks it ran there
export WARD_TEST_LANDLOCK_ABI=2
echo "vm: kernel $(uname -r), cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
# What the tests expect of a distribution's root, which busybox's lacks: a
# /usr to show, an os-release to read, a shadow file to mask, a world-writable
# /var/tmp outside every writable path of the sandbox, and udev's links in /dev.
mkdir -p /usr/bin /var/tmp
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
chmod 1777 /var/tmp
printf 'NAME="ward test guest"\nID=busybox\n' >/etc/os-release
printf 'root:*:19000:0:99999:7:::\nuser:*:19000:0:99999:7:::\n' >/etc/shadow
chmod 640 /etc/shadow
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
