/* caps.c — the capability drop and no_new_privs, for the sandbox's init. */
#include "ward/caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Set and locked: uid 0 gets no capabilities from execve (NOROOT), changing
 * uids does not adjust them (NO_SETUID_FIXUP), KEEP_CAPS stays off, and no
 * ambient capability can be raised. The _LOCKED bits make it final. */
#define SECUREBITS                                                                                 \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                           \
	 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |    \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

int ward_caps_drop_all(struct ward_error **err)
{
	/* Version 3 covers 64 capabilities in two 32-bit words: all zero. */
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } }, held[2] = { { 0 } };

	if (syscall(SYS_capget, &hdr, held) < 0)
		return ward_error_make(err, errno, "capabilities: read the permitted set");
	/* Without a user namespace of its own, an unprivileged process holds no
	 * capability, and without CAP_SETPCAP it can change neither the
	 * securebits nor the bounding set. There is then nothing to lock: the
	 * effective and ambient sets are subsets of the permitted one, and
	 * no_new_privs (set next by every caller) keeps execve from granting any
	 * (setuid, file capabilities and uid 0 alike). Only the inheritable set
	 * may still hold bits; capset below empties it. */
	if (held[0].permitted == 0 && held[1].permitted == 0)
		goto sets;
	/* Securebits and the bounding set first: both need CAP_SETPCAP. */
	if (cap_set_secbits(SECUREBITS) < 0)
		return ward_error_make(err, errno, "capabilities: lock securebits");
	/* Up to the kernel's last capability rather than a compile-time
	 * CAP_LAST_CAP (a newer kernel may have more): EINVAL past it. */
	for (unsigned long c = 0;; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			if (errno == EINVAL && c > 0)
				break;
			return ward_error_make(err, errno,
					       "capabilities: drop capability %lu from the bounding set",
					       c);
		}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return ward_error_make(err, errno, "capabilities: clear the ambient set");
sets:
	if (syscall(SYS_capset, &hdr, data) < 0)
		return ward_error_make(err, errno, "capabilities: empty the permitted set");
	return 0;
}

int ward_caps_no_new_privs(struct ward_error **err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return ward_error_make(err, errno, "set no_new_privs");
	return 0;
}
