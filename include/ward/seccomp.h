/* ward/seccomp.h — seccomp profiles: parse a table, compile it to BPF once,
 * load the program in the sandbox.
 *
 * How to use this:
 *
 *     // in the supervisor, before clone (compiled once per process and
 *     // profile, then served from the cache)
 *     struct ward_seccomp_options opts = { .allow_ptrace = false };
 *     const struct ward_seccomp_program *prog =
 *             ward_seccomp_program_get("default", &opts, &err);   // or "strict",
 *                                                                  // "off", a file
 *     // in the sandbox's init, last, just before the command's execve
 *     // (after no_new_privs, the capability drop and Landlock)
 *     if (ward_seccomp_load(prog, &err) < 0) ...
 *
 * A profile is a text table, one rule a line (filters/seccomp/seccomp-default.profile
 * documents the format and is the default profile):
 *
 *     SYSCALL ACTION [CONDITION...] [@TAG]
 *
 * Compiling turns it into a classic BPF program (struct sock_fprog) for the
 * native architecture (x86-64 or aarch64), written by ward itself and kept
 * short (the kernel compiles it again at every load); every other ABI the
 * machine can run (i386 and x32 on x86-64, arm on aarch64) is killed. Where
 * several rules of one call match, the most restrictive action wins (kill,
 * trap, errno, ..., allow), as between stacked filters in the kernel.
 * Loading is one seccomp(2) call: no allocation, so it is safe after fork.
 */
#ifndef WARD_SECCOMP_H
#define WARD_SECCOMP_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ward/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define WARD_SECCOMP_MAX_CONDS 6   /* one per system call argument */
#define WARD_SECCOMP_MAX_RANGES 16 /* values in one "in"/"notin" list */
#define WARD_SECCOMP_NAME_MAX 64

enum ward_seccomp_op {
	WARD_SECCOMP_EQ = 1, /* argN == v (64-bit) */
	WARD_SECCOMP_NE,     /* argN != v */
	WARD_SECCOMP_LT,     /* argN <  v */
	WARD_SECCOMP_LE,     /* argN <= v */
	WARD_SECCOMP_GT,     /* argN >  v */
	WARD_SECCOMP_GE,     /* argN >= v */
	WARD_SECCOMP_MASKED_EQ, /* (argN & mask) == v */
	WARD_SECCOMP_IN,     /* the low 32 bits of argN in one of the ranges */
};

struct ward_seccomp_cond {
	unsigned arg; /* 0..5 */
	enum ward_seccomp_op op;
	uint64_t mask;  /* WARD_SECCOMP_MASKED_EQ */
	uint64_t value; /* every op but WARD_SECCOMP_IN */
	/* WARD_SECCOMP_IN: inclusive ranges over 32-bit values, sorted, disjoint
	 * ("notin" is parsed into the complement). */
	uint32_t lo[WARD_SECCOMP_MAX_RANGES], hi[WARD_SECCOMP_MAX_RANGES];
	unsigned n_ranges;
};

struct ward_seccomp_rule {
	char syscall[WARD_SECCOMP_NAME_MAX];
	int nr;          /* the native number (libseccomp's, negative if the arch lacks it) */
	uint32_t action; /* a SECCOMP_RET_* value, errno included */
	struct ward_seccomp_cond conds[WARD_SECCOMP_MAX_CONDS]; /* all must hold */
	unsigned n_conds;
	char tag[32];    /* "" or the @TAG an option lifts ("ptrace") */
	char source[WARD_SECCOMP_NAME_MAX]; /* the profile the line is in */
	unsigned line;
};

struct ward_seccomp_profile {
	char name[WARD_SECCOMP_NAME_MAX];
	uint32_t default_action; /* SECCOMP_RET_ALLOW unless "@default" says otherwise */
	struct ward_seccomp_rule *rules;
	size_t n_rules;
};

struct ward_seccomp_options {
	bool allow_ptrace; /* lift the rules tagged @ptrace (debuggers inside the sandbox) */
	bool allow_nested; /* lift the rules tagged @nested (sandboxes inside the sandbox) */
};

/* A compiled program. `fprog` points into the object; len 0 means "off". */
struct ward_seccomp_program {
	char name[WARD_SECCOMP_NAME_MAX]; /* the profile's name, for the result */
	struct sock_fprog fprog;
};

/* Parse a profile from text (NUL-terminated). `name` names it in messages
 * and in the result. "@include NAME" lines pull in a built-in profile.
 * On success *out owns a new profile (ward_seccomp_profile_free) and 0 is
 * returned. Every malformed line fails with -1 and err, kind
 * InvalidParameters, its message "seccomp profile 'NAME' line N: what is wrong"
 * and rule "seccomp"; ENOMEM otherwise. Pure: no OS state touched. */
WARD_API int ward_seccomp_profile_parse(const char *name, const char *text,
					struct ward_seccomp_profile **out, struct ward_error **err);

/* A built-in profile: "default" or "strict". Unknown names fail with kind
 * InvalidParameters. */
WARD_API int ward_seccomp_profile_builtin(const char *name, struct ward_seccomp_profile **out,
					  struct ward_error **err);

/* The text of a built-in profile, or NULL. Static storage. */
WARD_API const char *ward_seccomp_profile_text(const char *name);

/* Read and parse a profile file (named by its path). Fails with errno from
 * open/read, or as ward_seccomp_profile_parse(). */
WARD_API int ward_seccomp_profile_load_file(const char *path, struct ward_seccomp_profile **out,
					    struct ward_error **err);

WARD_API void ward_seccomp_profile_free(struct ward_seccomp_profile *profile);

/* Compile to classic BPF. opts may be NULL (defaults). Pure. On success
 * *out owns a new program (ward_seccomp_program_free). Fails with -1 and
 * err: kind InvalidParameters naming the profile for a program longer than
 * the kernel's BPF_MAXINSNS (4096) instructions, or the line of a call
 * with more than 64 rules; ENOMEM otherwise. */
WARD_API int ward_seccomp_compile(const struct ward_seccomp_profile *profile,
				  const struct ward_seccomp_options *opts,
				  struct ward_seccomp_program **out, struct ward_error **err);

WARD_API void ward_seccomp_program_free(struct ward_seccomp_program *prog);

/* The compiled program for `spec`: "default", "strict", "off" (a program of
 * length 0 that loads nothing), or a profile file's path (any other name; one
 * without a '/' that does not exist is reported as an unknown profile, kind
 * InvalidParameters). Compiled on first
 * use and kept for the life of the process, one per spec and options (a file
 * is compiled again when its size, mtime or inode changed); the pointer stays
 * valid until exit. Thread-safe. Fails as ward_seccomp_profile_load_file()
 * and ward_seccomp_compile(). */
WARD_API const struct ward_seccomp_program *
ward_seccomp_program_get(const char *spec, const struct ward_seccomp_options *opts,
			 struct ward_error **err);

/* Install the program on the calling thread with seccomp(2). No allocation:
 * meant for the sandbox's init, with err pointing to preallocated storage.
 * no_new_privs must be set (or CAP_SYS_ADMIN held). A program of length 0
 * returns 0 at once. Returns 0, or -1 with err: EACCES when no_new_privs is
 * not set, EINVAL for a program the kernel refuses, ENOMEM. */
WARD_API int ward_seccomp_load(const struct ward_seccomp_program *prog, struct ward_error **err);

#ifdef __cplusplus
}
#endif
#endif
