/* util-internal.h — cleanup attributes and small helpers shared by libward's
 * modules. Not installed. */
#ifndef WARD_UTIL_INTERNAL_H
#define WARD_UTIL_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))

/* Hand ownership on: return the value and leave the variable empty. */
#define steal_ptr(p)                                                                               \
	({                                                                                         \
		__typeof__(p) _tmp = (p);                                                          \
		(p) = NULL;                                                                        \
		_tmp;                                                                              \
	})

static inline int steal_fd(int *fd)
{
	int tmp = *fd;

	*fd = -1;
	return tmp;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Write all of buf, retrying on EINTR and short writes. Returns 0 or -1. */
int ward_write_all(int fd, const void *buf, size_t len);

/* The most descriptors one message of ward's carries. */
#define WARD_FDS_MAX 8

/* Send buf[0..len) and fds[0..n) (n ≤ WARD_FDS_MAX; SCM_RIGHTS when n > 0) as
 * one message on a UNIX socket; flags are sendmsg's (MSG_NOSIGNAL is always
 * added), EINTR retried. The bytes sent, or -1 with errno. System calls only:
 * usable in the sandbox's init after clone. */
ssize_t ward_send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n,
		      int flags);

/* Receive one message into buf (at most len bytes) and at most max
 * descriptors (close-on-exec) into fds, *n set to how many; any beyond max
 * are closed. flags are recvmsg's; EINTR is retried. The bytes received (0
 * at the end), or -1 with errno (EAGAIN with MSG_DONTWAIT). System calls
 * only. */
ssize_t ward_recv_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *n,
		      int flags);

/* The parent of process pid (its number as text, as a /proc entry's name),
 * read from stat in proc (an open /proc), or -1. System calls only. */
pid_t ward_proc_ppid(int proc, const char *pid);

/* Read a small file whole into buf (NUL-terminated, trailing newline kept).
 * Returns the length, or -1 with errno set. */
ssize_t ward_read_file(const char *path, char *buf, size_t size);

/* This process's /proc/self/stat, the fields ward uses: its start time
 * (run and cgroup names, told apart from a later process of the same pid)
 * and its memory layout (init's PR_SET_MM_MAP). */
struct ward_self_stat {
	unsigned long long start_time;
	unsigned long long start_code, end_code, start_stack, start_data, end_data, start_brk;
};

/* Read once per process and kept: 0, or -1 with errno. A forked or cloned
 * child (another pid) reads its own start time again; with `layout_only`
 * it takes the parent's kept copy, whose layout it shares (a copy of the
 * same memory, no execve since), and reads only when there is none. */
int ward_self_stat(struct ward_self_stat *out, bool layout_only);

/* Write a string to a file (open O_WRONLY, one write). Returns 0 or -1. */
int ward_write_file(const char *path, const char *s);

/* openat2(dirfd, path, flags) crossing no symbolic link (RESOLVE_NO_SYMLINKS
 * | RESOLVE_NO_MAGICLINKS, and RESOLVE_BENEATH when beneath). Where openat2
 * answers ENOSYS — a kernel before 5.6, or a seccomp profile that cannot
 * read its arguments (ward's own, Docker's) — the path is walked one
 * component at a time with O_NOFOLLOW, which refuses the same links (ELOOP)
 * and, beneath, an absolute path or ".." (EXDEV). flags must not create.
 * Returns the fd or -1 with errno. */
int ward_open_nofollow(int dirfd, const char *path, int flags, bool beneath);

/* Monotonic clock in nanoseconds. */
long long ward_now_ns(void);

/* Answers of a terminal to what a command wrote there (a cursor position
 * report, a title or a colour read back, a device attribute), arriving
 * after the command ended, would be read by the terminal's next reader (the
 * host's shell, ward shell's line editor, a y/N question) as typed input:
 * bytes the command chose. So: ask the terminal at fd tty for its primary
 * device attributes (DA1, which every terminal answers, and only after
 * everything asked before it) and read what comes until that answer (1 s
 * at most): the terminal's reports in it are dropped, the keys typed meanwhile
 * copied to keep (at most cap bytes; keep NULL: dropped too). What follows
 * the answer stays queued; without an answer, what is queued is dropped (it
 * may be late answers still), and nothing is kept. Answers in 8-bit form
 * (S8C1T; raw or UTF-8 C1 controls) are reports too. The terminal's modes are as they were on
 * return. Returns the count of bytes kept. owed: how many answers to DA1
 * questions of the command's own come first (ward_tty_owed()): the end is
 * the answer after those, not one the command had the terminal send. */
size_t ward_tty_take_answers(int tty, char *keep, size_t cap, unsigned owed);

/* Whether output bound for a terminal asks it anything (a cursor position,
 * device attributes, a colour, a setting, the answerback message): only
 * then can answers come, and ward_tty_take_answers() is worth its round
 * trip (1 s at a terminal that never answers, a program's pty). Fed in
 * pieces; asked stays true once seen. Zero-initialise. */
struct ward_tty_scan {
	int state;
	bool dollar;
	char inter; /* CSI: the last of ? * # & > = */
	int osc;    /* OSC: its number so far, -1 past it */
	bool asked;
	unsigned da1s;	  /* DA1 questions asked (CSI c, CSI 0 c, DECID) */
	int in_state;	  /* ward_tty_scan_input()'s */
	unsigned da1s_in; /* DA1 answers the command was given */
};
void ward_tty_scan(struct ward_tty_scan *q, const char *b, size_t n);
/* What the terminal sent the command (relayed while it ran): the answers to
 * its DA1 questions it took itself. */
void ward_tty_scan_input(struct ward_tty_scan *q, const char *b, size_t n);
/* The command's DA1 questions whose answers are still to come. */
unsigned ward_tty_owed(const struct ward_tty_scan *q);

/* Output bound for a terminal through a pipe (the command has no terminal
 * of its own: ward is in the background, or only stdout or stderr is a
 * terminal) has no way back: the terminal's answers to its queries would
 * reach whoever reads the terminal next, the host's shell, as typed input.
 * So the queries ward_tty_scan() knows are cut out as the output passes: a
 * DCS, APC, PM or SOS string, ENQ, DECID and a CSI query whole (a CSI is
 * held up to its final byte, at most WARD_TTY_FILTER_HOLD bytes of it); an
 * OSC query from where it shows, replaced by CAN (the terminal drops the
 * sequence it has so far). A '?' inside an OSC parameter (a hyperlink's
 * URL) asks nothing and passes. Everything else passes unchanged, in
 * order; a control inside a sequence is carried out as it would be.
 * Zero-initialise. */
#define WARD_TTY_FILTER_HOLD 128
struct ward_tty_filter {
	int state;
	unsigned cont; /* a UTF-8 character's bytes still to come */
	bool utf8_c1;  /* the sequence began with a C1 control in UTF-8 (0xc2 xx) */
	bool osc_c2;   /* a 0xc2 held in an OSC string: a C1 control may follow */
	int osc;       /* OSC: its number so far, -1 past it */
	int osc_num;   /* OSC: its number once past it */
	unsigned char prev;
	struct ward_tty_scan q; /* CSI: whether its final byte asks */
	char seq[WARD_TTY_FILTER_HOLD]; /* CSI: held up to its final byte */
	size_t seq_len;			/* past sizeof(seq): too long, cut */
};
/* Filter n bytes of in into out, which has room for WARD_TTY_FILTER_ROOM(n)
 * bytes; returns the count written. A byte may come out as up to four (a
 * CAN ending a string, a byte held before it, itself, a CAN after it), and
 * a CSI held from the last call comes out whole. */
#define WARD_TTY_FILTER_ROOM(n) (4 * (size_t)(n) + WARD_TTY_FILTER_HOLD + 8)
size_t ward_tty_filter(struct ward_tty_filter *f, const char *in, size_t n, char *out);
/* At the end of the output: what is held back that is safe to pass (a lead
 * byte), or a CAN ending an unended OSC string, into out, which has room
 * for 1 byte; returns its count. */
size_t ward_tty_filter_end(struct ward_tty_filter *f, char *out);

/* "an object", "a string", "a number with a fraction"…: what a JSON value is,
 * for messages naming a wrong type (jschema.c). */
struct json_t;
const char *ward_json_type_name(const struct json_t *v);

/* The NULL-terminated list of names joined by ", " into buf (truncated to
 * fit): the valid keys a message about an unknown one lists. Returns buf. */
char *ward_names_join(const char *const *names, char *buf, size_t size);


/* ---- hostpath.c and statedir.c: opening a host path that a person, a policy or the
 * environment named (the state directory, --net-log, policy files) so that
 * another local user cannot point ward at something else.
 *
 * The argument, as in OpenSSH's safe_path(): a path is ward's to use when
 * every directory on it is owned by the caller or root and writable by no
 * one else (a sticky directory such as /tmp excepted: others may add names
 * there but not rename or remove ours). Then no one but the caller and root
 * can change what the path names, so checking it once, from "/" down,
 * holds for as long as ward uses it. Each directory is judged by lstat on
 * the path walked so far (one system call a component: ward does this on
 * every command); what the walk reached is then opened in one call that
 * crosses no symbolic link (openat2 RESOLVE_NO_SYMLINKS) and checked to be
 * the very directory judged (st_dev, st_ino). A symbolic link on the way is
 * followed only when root or the caller owns it (as the kernel's
 * fs.protected_symlinks does in sticky directories), and its target is
 * walked and checked in turn; the last component of a file is never
 * followed. The object itself is judged on the opened descriptor (fstat),
 * so nothing can be swapped in between.
 *
 * ward_hostpath_judge() is the pure rule; the rest is the thin kernel part.
 * Messages name the path and the reason:
 *     network log '/srv/x/net.log': '/srv/x' is owned by uid 1001 (not you or root)
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ward/error.h"

enum ward_hostpath_role {
	WARD_HOSTPATH_ANCESTOR,	    /* a directory on the way: root's or the caller's,
				       writable by no one else unless sticky */
	WARD_HOSTPATH_PRIVATE_DIR,  /* ward's state directory and what it makes in it:
				       the caller's, writable by no one else */
	WARD_HOSTPATH_PRIVATE_FILE, /* a file ward keeps there (the rate limit state):
				       a regular file of the caller's, one link, writable
				       by no one else */
	WARD_HOSTPATH_CONFIG,	    /* a file ward takes rules from (a policy): the
				       caller's or root's, writable by no one else */
	WARD_HOSTPATH_LOG,	    /* a file ward appends to (--net-log): a regular
				       file of the caller's or root's, one link,
				       writable by no one else */
};

/* Whether st (from fstat on an opened descriptor) may serve as role for the
 * user caller (pure). NULL when it may; otherwise the reason, written into
 * why ("is owned by uid 1001 (not you or root)", "is writable by its group",
 * "has 2 hard links", ...) and returned. */
const char *ward_hostpath_judge(enum ward_hostpath_role role, const struct stat *st, uid_t caller,
				char *why, size_t size);

/* Whether a symbolic link (lstat) may be followed on the way (pure): only one
 * that root or the caller owns. */
bool ward_hostpath_may_follow(const struct stat *lst, uid_t caller);

/* Open the directory `sub` below the directory `base` (both judged as
 * ANCESTOR on every component; the last one of sub, or of base when sub is
 * NULL, as PRIVATE_DIR when `private_dir`). base is absolute, or relative to
 * the working directory; it must exist. With `create`, missing components of
 * sub are made (mode 0700) as the walk meets them; without it a missing one
 * ends the walk with WARD_HOSTPATH_ABSENT (the directory could be made: the
 * walk up to it passed) and no descriptor. label names the path in messages
 * ("state directory"). Returns an O_PATH descriptor (usable as the dirfd of
 * the *at calls, and with fstat), WARD_HOSTPATH_ABSENT as said, or -1 with
 * *err (errno in ->code: EPERM
 * for a refusal, ELOOP for a symbolic link not followed, else what the
 * kernel said). */
#define WARD_HOSTPATH_ABSENT (-2)
int ward_hostpath_open_dir(const char *label, const char *base, const char *sub, bool create,
			   bool private_dir, struct ward_error **err);

/* Open the file `path` with flags (O_RDONLY, O_WRONLY | O_APPEND | O_CREAT,
 * ...; O_NOFOLLOW and O_CLOEXEC are added; a file made gets `mode`), the
 * directories to it judged as ANCESTOR and the file as role (CONFIG, LOG or
 * PRIVATE_FILE). A FIFO is accepted for CONFIG (read to its end by the
 * caller), nothing else that is not a regular file. "/dev/stdin",
 * "/dev/fd/N" and "/proc/self/fd/N" name one of the caller's own descriptors
 * (--policy <(...)): that descriptor is duplicated, not judged. Returns the
 * descriptor (blocking, close-on-exec) or -1 with *err as above. */
int ward_hostpath_open_file(const char *label, const char *path, enum ward_hostpath_role role,
			    int flags, mode_t mode, struct ward_error **err);

/* ---- the state directory (statedir.c) ---------------------------------------------- */

/* Where ward keeps its state (change sets, run records, the rate limit, the
 * placeholders' pool), and why. Tried in order, the first usable one wins:
 *   configured   the library's cfg->state_dir (then nothing else: a directory
 *                named by the program is used or refused, never replaced)
 *   $XDG_STATE_HOME/ward        (made with its missing parents)
 *   $HOME/.local/state/ward     ($HOME must exist)
 *   $XDG_RUNTIME_DIR/ward       ($XDG_RUNTIME_DIR must exist)
 *   /tmp/ward-UID
 *   /tmp/ward-UID.XXXXXX        when /tmp/ward-UID is another user's: the
 *                first of ours found there, else a new one (mkdtemp), so the
 *                rate limit's state still persists across invocations
 * "Usable": every directory on the way passes ward_hostpath_open_dir(), the
 * last one is the caller's with no group or other write. */
struct ward_state_choice {
	char *path;	    /* the directory (malloc'd; NULL: none) */
	const char *source; /* "configured", "XDG_STATE_HOME", "HOME",
			       "XDG_RUNTIME_DIR", "/tmp" */
	int fd;		    /* O_PATH descriptor of it, -1 when not made yet */
	char *skipped;	    /* "'PATH': reason\n" for each candidate passed over
			       (malloc'd, NULL when none) */
};

/* Choose the state directory. With `create` it is made and opened (->fd);
 * without, nothing is made on the host (doctor, lookups) and a candidate
 * that could be made counts as usable. Returns 0, or -1 with *err when no
 * candidate is usable (the message lists why each was passed over). */
int ward_state_choose(const char *configured, bool create, struct ward_state_choice *c,
		      struct ward_error **err);
void ward_state_choice_release(struct ward_state_choice *c);

/* Open (with create: make, mode 0700) the directory `name` in the state
 * directory's descriptor, judged PRIVATE_DIR; `state` names it in messages.
 * Returns an O_RDONLY | O_DIRECTORY descriptor, or -1 with *err (ENOENT
 * without create when it is not there). */
int ward_state_subdir(int state_fd, const char *state, const char *name, bool create,
		      struct ward_error **err);

/* Remove a tree (directories made writable first so that a command's
 * chmod 0 does not stop it). Missing is fine. */
int ward_rmtree(const char *path);

/* The same for name in the directory dfd, never following a symbolic link. */
int ward_rmtree_at(int dfd, const char *name);

/* The state directory for cfg (its own, else ward_state_choose()'s), made
 * and checked to be the caller's alone. malloc'd or NULL with err. */
char *ward_state_dir_for(const char *configured, struct ward_error **err);

/* The state directory (as ward_state_dir_for()) when its changes/NAME is
 * there and, like changes/, a directory of the caller's alone; NULL with
 * *err otherwise (InvalidParameters when there is no such set). */
char *ward_changes_dir_checked(const char *configured, const char *name, struct ward_error **err);

/* ---- jschema.c: one checker of JSON input against its shape, for the
 * policy file, the request and the server's parameters.
 *
 * The shape is a jansson unpack format ("{s:s, s?I, s?o}"), checked by
 * json_unpack_ex() with JSON_STRICT: jansson checks the types, the required
 * keys and that no other key is present; this file only turns jansson's
 * error into one wording that names the key:
 *
 *     PREFIX: PATH.KEY: must be a string, got an integer
 *     PREFIX: PATH.KEY: is missing
 *     PREFIX: PATH: unknown key "k" (valid: a, b, c)
 *
 * PATH is the caller's path of the object (NULL at the top) followed by the
 * keys and [indices] of the format's nested objects and arrays. What a
 * format cannot say (a range, a non-empty string, one of several types) the
 * caller checks after, and words the same way with ward_jschema_fail(). */
#include <jansson.h>
#include <stdarg.h>

#include "ward/error.h"

/* json_unpack_ex(v, fmt, ...) with JSON_STRICT. Every argument is a pointer
 * (keys, and where values go: 'b' takes an int *, 'I' a json_int_t *).
 * prefix and path may be NULL. Returns 0, or -1 with *err of kind
 * WARD_ERR_INVALID_PARAMETERS worded as above. */
int ward_jschema_unpack(json_t *v, const char *prefix, const char *path, struct ward_error **err,
			const char *fmt, ...);

/* The same, the arguments as a va_list (consumed). */
int ward_jschema_vunpack(json_t *v, const char *prefix, const char *path, struct ward_error **err,
			 const char *fmt, va_list ap);

/* An error in the same wording: "PREFIX: PATH: what". Returns -1. */
int ward_jschema_fail(const char *prefix, const char *path, struct ward_error **err,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Remove the members of obj whose value is null: where null means "not
 * given" (the request, the server's parameters). */
void ward_jschema_drop_nulls(json_t *obj);

/* Fail on a string member of obj holding a NUL (\u0000): no command, path
 * or name can hold one. */
int ward_jschema_no_nul(json_t *obj, const char *prefix, struct ward_error **err);

#endif
