/* compile.c — the per-process cache of compiled profiles, and loading (the
 * only part that runs in the sandbox).
 *
 * Compiling (bpf.c) is separate from loading, as minijail's compile_filter()
 * does: the supervisor compiles once per profile, the sandbox's init only
 * hands the ready sock_fprog to seccomp(2). */
#include "filters/seccomp/seccomp-internal.h"
#include "ward/seccomp.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/util/util-internal.h"

/* ---- the cache ------------------------------------------------------------------- */

struct cache_entry {
	struct cache_entry *next;
	char *spec;
	bool allow_ptrace;
	bool allow_nested;
	bool is_file;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct ward_seccomp_program *prog;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cache_entry *cache;
static const struct ward_seccomp_program program_off = { .name = "off" };

static bool same_file(const struct cache_entry *e, const struct stat *st)
{
	return e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size &&
	       e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static const struct ward_seccomp_program *get_locked(const char *spec,
						     const struct ward_seccomp_options *opts,
						     struct ward_error **err)
{
	bool is_file = ward_seccomp_profile_text(spec) == NULL;
	bool allow_ptrace = opts && opts->allow_ptrace;
	bool allow_nested = opts && opts->allow_nested;
	struct ward_seccomp_profile *profile = NULL;
	struct ward_seccomp_program *prog = NULL;
	struct cache_entry *e;
	struct stat st = { 0 };
	int r;

	if (is_file && stat(spec, &st) < 0) {
		if (!strchr(spec, '/') && errno == ENOENT) {
			ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					     "unknown seccomp profile '%s' (default, strict, off, "
					     "or a file)",
					     spec);
			if (err)
				ward_error_set_rule(*err, "seccomp");
			return NULL;
		}
		ward_error_make(err, errno, "seccomp profile '%s'", spec);
		return NULL;
	}
#ifndef WARD_SECCOMP_NO_BUILTIN
	/* the built-in programs are the ones without the nested rules lifted */
	if (!is_file && !allow_nested) {
		const struct ward_seccomp_program *built = ward_seccomp_builtin(spec, allow_ptrace);

		if (built)
			return built;
	}
#endif
	for (e = cache; e; e = e->next)
		if (strcmp(e->spec, spec) == 0 && e->allow_ptrace == allow_ptrace &&
		    e->allow_nested == allow_nested &&
		    (!is_file || same_file(e, &st)))
			return e->prog;

	r = is_file ? ward_seccomp_profile_load_file(spec, &profile, err)
		    : ward_seccomp_profile_builtin(spec, &profile, err);
	if (r < 0)
		return NULL;
	r = ward_seccomp_compile(profile, opts, &prog, err);
	ward_seccomp_profile_free(profile);
	if (r < 0)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (e)
		e->spec = strdup(spec);
	if (!e || !e->spec) {
		free(e);
		ward_seccomp_program_free(prog);
		ward_error_make(err, ENOMEM, "seccomp profile '%s'", spec);
		return NULL;
	}
	e->allow_ptrace = allow_ptrace;
	e->allow_nested = allow_nested;
	e->is_file = is_file;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->size = st.st_size;
	e->mtime = st.st_mtim;
	e->prog = prog;
	/* Entries are never removed: callers keep the pointers until exit. */
	e->next = cache;
	cache = e;
	return prog;
}

const struct ward_seccomp_program *ward_seccomp_program_get(const char *spec,
							    const struct ward_seccomp_options *opts,
							    struct ward_error **err)
{
	const struct ward_seccomp_program *prog;

	if (!spec || !*spec) {
		ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
				     "empty seccomp profile name");
		return NULL;
	}
	if (strcmp(spec, "off") == 0)
		return &program_off;
	pthread_mutex_lock(&cache_lock);
	prog = get_locked(spec, opts, err);
	pthread_mutex_unlock(&cache_lock);
	return prog;
}

/* ---- load (in the sandbox: system calls only) -------------------------------------- */

int ward_seccomp_load(const struct ward_seccomp_program *prog, struct ward_error **err)
{
	if (!prog || prog->fprog.len == 0)
		return 0;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog->fprog) < 0) {
		if (errno == EACCES)
			return ward_error_make(err, errno,
					       "seccomp: load profile '%s' (no_new_privs is not set)",
					       prog->name);
		return ward_error_make(err, errno, "seccomp: load profile '%s'", prog->name);
	}
	return 0;
}
