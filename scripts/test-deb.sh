#!/bin/sh
# scripts/test-deb.sh DIR — install the .debs of DIR (make deb) into an empty
# dpkg root, as `apt install ./ward_*.deb` would on a machine that has their
# dependencies, and check what a new user reaches for first: the installed
# ward runs (--version, doctor, a sandboxed command), man finds its pages, the
# bash completion loads, a program builds against the installed libward; then
# purge them and check that nothing is left. Needs root (dpkg --root).
#
# The root is not a full system: dpkg's database starts empty, so the
# packages' dependencies (libc6, libseccomp2, ...) are the host's, taken with
# --force-depends, and the maintainer scripts run on the host with $DPKG_ROOT
# (--force-script-chrootless), which postinst/postrm honour.
set -eu
DIR=${1:?usage: scripts/test-deb.sh DIR}
DIR=$(realpath "$DIR")
R=$(mktemp -d /tmp/ward-test-deb.XXXXXX)
LOG=$(mktemp /tmp/ward-test-deb-log.XXXXXX)
trap 'rm -rf "$R" "$LOG"' EXIT
fail() { cat "$LOG" >&2; echo "test-deb: FAIL: $*" >&2; exit 1; }

mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/lib/dpkg/triggers"
: >"$R/var/lib/dpkg/status"
: >"$R/var/lib/dpkg/available"
DPKG="dpkg --root=$R --force-depends --force-script-chrootless --log=/dev/null"

# an AppArmor 4.0 host: postinst puts the profile in place
mkdir -p "$R/etc/apparmor.d/abi" && : >"$R/etc/apparmor.d/abi/4.0"

$DPKG -i "$DIR"/ward_*.deb "$DIR"/libward0_*.deb "$DIR"/libward-dev_*.deb >"$LOG" 2>&1 ||
	fail "dpkg -i"
for p in ward libward0 libward-dev; do
	dpkg --root="$R" -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' ||
		fail "$p not installed"
done
echo "ok - installed ward, libward0, libward-dev"

W="$R/usr/bin/ward"
v=$("$W" --version) || fail "ward --version"
[ "$v" = "ward 0.1.0" ] || fail "ward --version said '$v'"
echo "ok - $v"
"$W" doctor >/dev/null 2>&1 || echo "# note: ward doctor says the sandbox does not work here"
echo "ok - ward doctor ran"
WD=$(mktemp -d "$R/wd.XXXXXX")
chmod 755 "$WD"
out=$(cd "$WD" && "$W" run --no-policy -- echo from-the-package) || fail "ward run: $out"
[ "$out" = from-the-package ] || fail "ward run said '$out'"
echo "ok - ward run from the package"
# the TLS helper: installed, runnable (its libraries there), and the only
# program of the package that links OpenSSL
T="$R/usr/libexec/ward/ward-tls"
[ -x "$T" ] || fail "no $T"
out=$("$T" 2>&1 3</dev/null) && fail "ward-tls ran by hand"
case "$out" in *"started by ward"*) ;; *) fail "ward-tls by hand said '$out'" ;; esac
for f in "$W" "$R"/usr/lib/*/libward.so.0; do
	! readelf -d "$f" | grep -qE 'libssl|libcrypto' || fail "$f links OpenSSL"
done
echo "ok - ward-tls in /usr/libexec/ward; ward and libward without OpenSSL"

MANWIDTH=80 man -M "$R/usr/share/man" ward 2>/dev/null | grep -q 'ward run' || fail "man ward"
MANWIDTH=80 man -M "$R/usr/share/man" 5 ward-policy 2>/dev/null | grep -q 'rate_limit' ||
	fail "man 5 ward-policy"
echo "ok - man ward, man 5 ward-policy"

bash --norc -c ". '$R/usr/share/bash-completion/completions/ward' &&
	COMP_WORDS=(ward ru) COMP_CWORD=1 && _ward && [ \"\${COMPREPLY[*]}\" = run ]" ||
	fail "bash completion"
echo "ok - bash completion"

[ -f "$R/etc/apparmor.d/ward" ] && grep -q '^profile ward /usr/bin/ward ' "$R/etc/apparmor.d/ward" ||
	fail "postinst did not put the AppArmor profile in place"
echo "ok - AppArmor profile in place (4.0 ABI)"
ls "$R/usr/share/doc/ward/examples/"*.json >/dev/null || fail "examples"

ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
cat >"$R/prog.c" <<'C'
#include <stdio.h>
#include <ward/policy.h>
int main(void) {
	struct ward_config cfg;
	ward_config_init(&cfg);
	ward_config_release(&cfg);
	puts("linked");
	return 0;
}
C
PKG_CONFIG_PATH="$R/usr/lib/$ma/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$R" \
	cc -o "$R/prog" "$R/prog.c" $(PKG_CONFIG_PATH="$R/usr/lib/$ma/pkgconfig" \
	PKG_CONFIG_SYSROOT_DIR="$R" pkg-config --cflags --libs ward) || fail "build against libward"
[ "$(LD_LIBRARY_PATH="$R/usr/lib/$ma" "$R/prog")" = linked ] || fail "run against libward.so.0"
echo "ok - a program builds and runs against the installed libward"
rm -f "$R/prog" "$R/prog.c"
rm -rf "$WD"

$DPKG --purge libward-dev libward0 ward >"$LOG" 2>&1 || fail "dpkg --purge"
left=$(find "$R" ! -type d ! -path "$R/var/lib/dpkg/*" ! -path "$R/etc/apparmor.d/abi/*")
[ -z "$left" ] || fail "left after purge: $left"
echo "ok - purged, nothing left"

# Debian 12: AppArmor 3.0 would refuse the profile; postinst leaves it out
rm -rf "$R/etc/apparmor.d"
$DPKG -i "$DIR"/ward_*.deb >"$LOG" 2>&1 || fail "dpkg -i ward (no AppArmor 4.0)"
[ ! -e "$R/etc/apparmor.d/ward" ] || fail "profile installed without the 4.0 ABI"
"$R/usr/bin/ward" --version >/dev/null || fail "ward --version"
$DPKG --purge ward >"$LOG" 2>&1 || fail "dpkg --purge ward"
echo "ok - no AppArmor 4.0: no profile; purged"
