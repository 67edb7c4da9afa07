# seccomp-strict.profile — the default profile and more, for workloads that
# need no networking tools, no NUMA tuning and no old-ABI tricks. The format
# is described in seccomp-default.profile.
@include default

# No netlink at all (getaddrinfo falls back to asking the resolver for both
# address families), and no raw or packet sockets of any family.
socket             EPERM  arg0 in AF_NETLINK
socket             EPERM  arg1&SOCK_TYPE_MASK==SOCK_RAW
socket             EPERM  arg1&SOCK_TYPE_MASK==SOCK_PACKET

# Comparing or taking other processes' resources.
kcmp               EPERM  @ptrace
pidfd_getfd        EPERM  @ptrace
process_madvise    EPERM  @ptrace

# Filesystem identity and notification outside path checks.
name_to_handle_at  EPERM
fanotify_init      EPERM
chroot             EPERM

# NUMA memory placement: no build or test needs it.
mbind              EPERM
migrate_pages      EPERM
move_pages         EPERM
set_mempolicy      EPERM

# Old interfaces nothing current needs.
modify_ldt         EPERM
vhangup            EPERM
sysfs              EPERM
ustat              EPERM
sethostname        EPERM
setdomainname      EPERM
