# seccomp-default.profile — ward's default seccomp profile.
#
# Format, one rule a line:
#
#     SYSCALL  ACTION  [CONDITION...]  [@TAG]
#
# ACTION is an errno name (EPERM, ENOSYS, EACCES, ...) to fail the call with,
# or one of allow, kill (the process), kill-thread, trap (SIGSYS), log.
# CONDITIONs compare the call's arguments; a rule applies when all hold:
#
#     argN==V  argN!=V  argN<V  argN<=V  argN>V  argN>=V   64-bit comparison
#     argN&MASK==V                                         masked equality
#     argN in V,V,LO..HI       argN notin V,V,LO..HI       on the low 32 bits
#
# "in" and "notin" look at the low 32 bits only, as the kernel does for int
# and unsigned int arguments, so garbage in a register's upper half cannot
# slip a value past them. Values are numbers (decimal or 0x hex) or the
# constant names ward knows (AF_*, CLONE_NEW*, TIOC*, NETLINK_*, SOCK_*,
# PER_LINUX, S_ISUID, S_ISGID, O_CREAT, O_TMPFILE), joined with |. Several rules for one call are
# alternatives; where rules with different actions all match, the most restrictive action wins
# (kill, kill-thread, trap, an errno, log, allow), as between stacked filters in the kernel.
# @TAG marks a rule an option lifts: @ptrace is lifted by ward's allow-ptrace
# option (debuggers inside the sandbox), @nested by allow-nested.
# Directives: "@default ACTION" sets the action for every call no rule
# matches (allow when absent: this profile is a deny list); "@include NAME"
# reads a built-in profile in place. "#" starts a comment.
#
# Calls made for another architecture's ABI (i386 via int 0x80 and x32 on
# x86-64, 32-bit arm on aarch64) kill the process whatever the profile says.
#
# The rule for choosing: deny, with EPERM, what build, test, git and package
# manager workloads never need and what reaches kernel attack surface or
# state outside the sandbox; keep everything ordinary tools do. setsockopt,
# sendto and bind stay allowed (denying them breaks test suites that start
# servers on the sandbox's own loopback).

# Kernel modules, replacing or rebooting the kernel.
init_module        EPERM
finit_module       EPERM
delete_module      EPERM
create_module      EPERM
get_kernel_syms    EPERM
query_module       EPERM
kexec_load         EPERM
kexec_file_load    EPERM
reboot             EPERM

# eBPF, perf events and kernel keyrings: large kernel attack surface, and
# keyrings are not namespaced.
bpf                EPERM
perf_event_open    EPERM
keyctl             EPERM
add_key            EPERM
request_key        EPERM

# userfaultfd stalls kernel threads at will (an exploitation primitive);
# io_uring runs operations this filter never sees.
userfaultfd        EPERM
io_uring_setup     EPERM
io_uring_enter     EPERM
io_uring_register  EPERM

# The mount family: the sandbox's view is built before this filter is loaded.
# @nested marks what ward's allow-nested option lifts, for a command that
# makes sandboxes of its own (ward inside ward, bubblewrap, podman): the
# mount family and new namespaces, inside a user namespace of its own only
# (nothing inside holds a capability outside one). clone3 stays ENOSYS.
mount              EPERM  @nested
umount2            EPERM  @nested
pivot_root         EPERM  @nested
move_mount         EPERM  @nested
open_tree          EPERM  @nested
fsopen             EPERM  @nested
fsconfig           EPERM  @nested
fsmount            EPERM  @nested
fspick             EPERM  @nested
mount_setattr      EPERM  @nested

# New namespaces. clone3 passes its flags in memory a filter cannot read, so
# it answers ENOSYS and libc falls back to clone, whose flags are checked.
unshare            EPERM  @nested
setns              EPERM  @nested
clone3             ENOSYS
clone              EPERM  arg0&CLONE_NEWNS==CLONE_NEWNS  @nested
clone              EPERM  arg0&CLONE_NEWCGROUP==CLONE_NEWCGROUP  @nested
clone              EPERM  arg0&CLONE_NEWUTS==CLONE_NEWUTS  @nested
clone              EPERM  arg0&CLONE_NEWIPC==CLONE_NEWIPC  @nested
clone              EPERM  arg0&CLONE_NEWUSER==CLONE_NEWUSER  @nested
clone              EPERM  arg0&CLONE_NEWPID==CLONE_NEWPID  @nested
clone              EPERM  arg0&CLONE_NEWNET==CLONE_NEWNET  @nested

# Tracing and reading other processes' memory.
ptrace             EPERM  @ptrace
process_vm_readv   EPERM  @ptrace
process_vm_writev  EPERM  @ptrace

# File handles bypass path-based checks (the "shocker" escape).
open_by_handle_at  EPERM

# Machine-wide state.
swapon             EPERM
swapoff            EPERM
acct               EPERM
quotactl           EPERM
quotactl_fd        EPERM
syslog             EPERM
lookup_dcookie     EPERM
uselib             EPERM
_sysctl            EPERM
iopl               EPERM
ioperm             EPERM
settimeofday       EPERM
clock_settime      EPERM
clock_adjtime      EPERM
adjtimex           EPERM

# Pushing input into a terminal the sandbox shares with its caller.
ioctl              EPERM  arg1 in TIOCSTI,TIOCLINUX

# Execution domains other than Linux (0xffffffff only asks the current one).
personality        EPERM  arg0 notin PER_LINUX,0xffffffff

# Socket families: UNIX, IPv4, IPv6, and netlink route only. NETLINK_ROUTE
# stays because ordinary tools need it: glibc's getaddrinfo() with
# AI_ADDRCONFIG (the default of many programs) asks it for the interfaces'
# addresses, and `ip addr` / `ip route` read it. It only sees the
# sandbox's own network namespace, and with every capability dropped it can
# read, not change. Every other netlink protocol (audit, uevents, sock_diag,
# netfilter, ...) and every other family (packet, vsock, bluetooth, alg, ...)
# is refused.
socket             EPERM  arg0 notin AF_UNIX,AF_INET,AF_INET6,AF_NETLINK
socket             EPERM  arg0 in AF_NETLINK  arg2 notin NETLINK_ROUTE

# Set-user-ID and set-group-ID bits. A file the command leaves in the
# workdir with them runs later on the host with its owner's identity — root's
# when ward ran as root — for whoever starts it. Nothing may set them: not
# the chmod family, not the mode a file or directory is created with (open
# and openat with O_CREAT or O_TMPFILE, creat, mkdir, mknod). A copy that
# keeps modes (cp -p, cp -a, tar -xp, rsync -p, install -m 4755) gets
# EPERM for the bits and leaves the file without them. The mode is a
# umode_t: only its low bits count, and the masks look at nothing else.
# openat2 passes its mode in memory a filter cannot read: ENOSYS, as for
# clone3, and callers fall back to openat. File capabilities
# (security.capability) need CAP_SETFCAP, which the sandbox does not have.
chmod              EPERM  arg1&S_ISUID==S_ISUID
chmod              EPERM  arg1&S_ISGID==S_ISGID
fchmod             EPERM  arg1&S_ISUID==S_ISUID
fchmod             EPERM  arg1&S_ISGID==S_ISGID
fchmodat           EPERM  arg2&S_ISUID==S_ISUID
fchmodat           EPERM  arg2&S_ISGID==S_ISGID
fchmodat2          EPERM  arg2&S_ISUID==S_ISUID
fchmodat2          EPERM  arg2&S_ISGID==S_ISGID
creat              EPERM  arg1&S_ISUID==S_ISUID
creat              EPERM  arg1&S_ISGID==S_ISGID
open               EPERM  arg1&O_CREAT==O_CREAT      arg2&S_ISUID==S_ISUID
open               EPERM  arg1&O_CREAT==O_CREAT      arg2&S_ISGID==S_ISGID
open               EPERM  arg1&O_TMPFILE==O_TMPFILE  arg2&S_ISUID==S_ISUID
open               EPERM  arg1&O_TMPFILE==O_TMPFILE  arg2&S_ISGID==S_ISGID
openat             EPERM  arg2&O_CREAT==O_CREAT      arg3&S_ISUID==S_ISUID
openat             EPERM  arg2&O_CREAT==O_CREAT      arg3&S_ISGID==S_ISGID
openat             EPERM  arg2&O_TMPFILE==O_TMPFILE  arg3&S_ISUID==S_ISUID
openat             EPERM  arg2&O_TMPFILE==O_TMPFILE  arg3&S_ISGID==S_ISGID
openat2            ENOSYS
mkdir              EPERM  arg1&S_ISUID==S_ISUID
mkdir              EPERM  arg1&S_ISGID==S_ISGID
mkdirat            EPERM  arg2&S_ISUID==S_ISUID
mkdirat            EPERM  arg2&S_ISGID==S_ISGID
mknod              EPERM  arg1&S_ISUID==S_ISUID
mknod              EPERM  arg1&S_ISGID==S_ISGID
mknodat            EPERM  arg2&S_ISUID==S_ISUID
mknodat            EPERM  arg2&S_ISGID==S_ISGID
