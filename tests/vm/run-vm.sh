#!/bin/bash
# tests/vm/run-vm.sh — run a static binary as the payload of a throw-away QEMU/TCG VM
# with a pure cgroup v2 hierarchy (Debian 6.1 cloud kernel, busybox initramfs).
#
#   run-vm.sh [options] STATIC_BINARY [ARGS...]
#     -m MEM      guest RAM (default 256M)
#     -c N        guest vCPUs (default 1; >1 uses multi-threaded TCG)
#     -t SECS     host-side timeout (default 300)
#     -f SRC[:DST] add a file to the initramfs (default DST=/bin/basename); repeatable
#     -k VMLINUZ  kernel (default: $RUNVM_KERNEL or $RUNVM_HOME/vmlinuz)
#     -a 'ARGS'   extra kernel command-line args
#     -v          also print the guest kernel console log (stderr) at the end
#
# Guest environment: payload (copied to /payload.d/<its name>) runs as root (pid 2, child of the busybox init
# script), cwd /, stdin /dev/null, PATH=/bin, with /proc, /sys, /dev (devtmpfs),
# /tmp (tmpfs) and cgroup2 at /sys/fs/cgroup with every available controller
# (cpu memory pids io cpuset hugetlb rdma misc) enabled in the root's
# cgroup.subtree_control. The payload starts in the root cgroup and may create
# child cgroups itself. Users: root(0), user(1000).
# Payload stdout -> ttyS1 -> our stdout, payload stderr -> ttyS2 -> our stderr,
# kernel console -> ttyS0 -> log file. Exit status of the script = payload's
# exit status (128+N if killed by signal N); 124 on timeout, 125 on VM failure.
# Env knobs: RUNVM_HOME (cache dir), RUNVM_CPU (default max), RUNVM_TB_MB (TCG code-cache MB).
# Setup (once, as root): run-vm.sh --setup (the kernel comes from Debian's
# linux-image-cloud-amd64 with `apt-get download`; qemu-system-x86, busybox-static and
# cpio are in scripts/deps.sh).
set -euo pipefail
RUNVM_HOME=${RUNVM_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/ward-vm}
KVER_PKG=linux-image-cloud-amd64

setup() {
  export DEBIAN_FRONTEND=noninteractive
  command -v qemu-system-x86_64 >/dev/null && [ -x /bin/busybox ] && command -v cpio >/dev/null ||
    { apt-get update -qq; apt-get install -y -qq --no-install-recommends qemu-system-x86 busybox-static cpio >/dev/null; }
  mkdir -p "$RUNVM_HOME"
  if [ ! -f "$RUNVM_HOME/vmlinuz" ]; then
    local d pkg; d=$(mktemp -d)
    pkg=$(apt-cache depends $KVER_PKG | awk '/Depends: linux-image-/{print $2; exit}')
    (cd "$d" && apt-get download -q "$pkg" >/dev/null 2>&1 && dpkg-deb --fsys-tarfile ./*.deb | tar -x ./boot)
    cp "$d"/boot/vmlinuz-* "$RUNVM_HOME/vmlinuz"; cp "$d"/boot/config-* "$RUNVM_HOME/config"; rm -rf "$d"
  fi
  if [ ! -f "$RUNVM_HOME/base-2.cpio" ]; then   # busybox + device nodes + init script, built once
    local r; r=$(mktemp -d); chmod 755 "$r"          # "." in the cpio becomes the guest's / (mktemp gives 0700)
    mkdir -p "$r"/{bin,dev,proc,sys,tmp,etc,root}; chmod 1777 "$r/tmp"; chmod 700 "$r/root"
    cp /bin/busybox "$r/bin/"
    for a in $("$r/bin/busybox" --list); do [ -e "$r/bin/$a" ] || ln -s busybox "$r/bin/$a"; done
    mknod -m 600 "$r/dev/console" c 5 1; mknod -m 666 "$r/dev/null" c 1 3
    printf 'root:x:0:0::/root:/bin/sh\nuser:x:1000:1000::/tmp:/bin/sh\n' >"$r/etc/passwd"
    printf 'root:x:0:\nuser:x:1000:\n' >"$r/etc/group"
    cat >"$r/init" <<'EOF'
#!/bin/sh
export PATH=/bin HOME=/root
if [ ! -e /.tmpfs-root ]; then
  # pivot_root(2) refuses the initramfs (rootfs) as the old root: run from a tmpfs copy
  mkdir /newroot; mount -t tmpfs -o mode=755 tmpfs /newroot
  for f in /* /.[!.]*; do case $f in /newroot|/proc|/sys|/dev|'/.[!.]*') ;; *) cp -a "$f" /newroot/;; esac; done
  mkdir -p /newroot/proc /newroot/sys /newroot/dev; : >/newroot/.tmpfs-root
  exec switch_root /newroot /init
fi
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp; mount -t cgroup2 cgroup2 /sys/fs/cgroup
for c in $(cat /sys/fs/cgroup/cgroup.controllers); do echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control; done
stty -F /dev/ttyS1 raw -echo; stty -F /dev/ttyS2 raw -echo
echo "@@RUNVM_START uptime=$(cut -d' ' -f1 /proc/uptime)"
. /payload.args                     # sets positional parameters
/payload.d/* "$@" </dev/null >/dev/ttyS1 2>/dev/ttyS2
rc=$?
echo "@@RUNVM_EXIT $rc uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
EOF
    chmod 755 "$r/init"
    (cd "$r" && find . | cpio -o -H newc --quiet) >"$RUNVM_HOME/base-2.cpio"; rm -rf "$r"
  fi
}

[ "${1:-}" = "--setup" ] && { setup; echo "setup done in $RUNVM_HOME"; exit 0; }

MEM=256M SMP=1 TMO=300 KERNEL=${RUNVM_KERNEL:-$RUNVM_HOME/vmlinuz} XARGS="" VERBOSE=0 EXTRA=()
while getopts "m:c:t:f:k:a:v" o; do case $o in
  m) MEM=$OPTARG;; c) SMP=$OPTARG;; t) TMO=$OPTARG;; f) EXTRA+=("$OPTARG");; k) KERNEL=$OPTARG;;
  a) XARGS=$OPTARG;; v) VERBOSE=1;; *) sed -n '2,14p' "$0"; exit 2;; esac; done
shift $((OPTIND-1))
[ $# -ge 1 ] || { sed -n '2,14p' "$0"; exit 2; }
PAYLOAD=$1; shift
[ -f "$RUNVM_HOME/base-2.cpio" ] && [ -f "$KERNEL" ] || setup >&2
file -L "$PAYLOAD" 2>/dev/null | grep -q 'statically linked\|static-pie' ||
  echo "run-vm.sh: warning: $PAYLOAD does not look statically linked" >&2

W=$(mktemp -d /tmp/runvm.XXXXXX); trap 'rm -rf "$W"' EXIT
mkdir -p "$W/r/bin"
mkdir -p "$W/r/payload.d"; install -m 755 "$PAYLOAD" "$W/r/payload.d/$(basename "$PAYLOAD")"   # keep argv[0] name (multi-call binaries)
{ printf 'set --'; for a in "$@"; do printf " '%s'" "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"; done; echo; } >"$W/r/payload.args"
for e in "${EXTRA[@]+"${EXTRA[@]}"}"; do
  src=${e%%:*}; dst=${e#*:}; [ "$dst" = "$e" ] && dst=/bin/$(basename "$src")
  mkdir -p "$W/r/$(dirname "$dst")"; cp -p "$src" "$W/r/$dst"
done
(cd "$W/r" && find . -mindepth 1 | cpio -o -H newc --quiet) >"$W/payload.cpio"
cat "$RUNVM_HOME/base-2.cpio" "$W/payload.cpio" >"$W/initrd"   # concatenated newc archives

# payload stdout/stderr: qemu "pipe" chardevs on FIFOs, drained by cat into our own fds 1/2
for n in out err; do mkfifo "$W/$n.in" "$W/$n.out"; done
exec 7<>"$W/out.out" 8<>"$W/err.out"          # keep a writer open so cat's open() never blocks
cat <"$W/out.out" 7>&- 8>&- & CO=$!
cat <"$W/err.out" 7>&- 8>&- >&2 & CE=$!
rc=0
timeout --foreground -k 5 "$TMO" qemu-system-x86_64 -accel "tcg,thread=multi${RUNVM_TB_MB:+,tb-size=$RUNVM_TB_MB}" -cpu "${RUNVM_CPU:-max}" -smp "$SMP" -m "$MEM" \
  -nodefaults -no-user-config -display none -no-reboot \
  -chardev file,id=con,path="$W/console.log" -serial chardev:con \
  -chardev pipe,id=out,path="$W/out" -serial chardev:out \
  -chardev pipe,id=err,path="$W/err" -serial chardev:err \
  -kernel "$KERNEL" -initrd "$W/initrd" \
  -append "console=ttyS0 loglevel=4 panic=-1 oops=panic mitigations=off init_on_alloc=0 $XARGS" \
  </dev/null 7>&- 8>&- || rc=$?
exec 7>&- 8>&-; wait $CO $CE || true             # cat sees EOF once qemu and we have closed
[ "$VERBOSE" = 1 ] && { echo "----- guest console -----"; tr -d '\r' <"$W/console.log"; } >&2
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "run-vm.sh: timeout after ${TMO}s" >&2; exit 124; fi
line=$(tr -d '\r' <"$W/console.log" | grep '^@@RUNVM_EXIT' | tail -1 || true)
if [ -z "$line" ]; then
  echo "run-vm.sh: VM ended without payload exit status (qemu rc=$rc); console tail:" >&2
  tr -d '\r' <"$W/console.log" | tail -20 >&2; exit 125
fi
set -- $line
exit "$2"
