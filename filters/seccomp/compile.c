/* compile.c — profile to BPF with libseccomp, the per-process cache,
 * and loading (the only part that runs in the sandbox).
 *
 * Compiling is separate from loading, as minijail's compile_filter() does:
 * the supervisor compiles once per profile, the sandbox's init only hands the
 * ready sock_fprog to seccomp(2). */
#include "filters/seccomp/seccomp-internal.h"
#include "ward/seccomp.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime/util/util-internal.h"

/* Rules a single line may expand to ("in"/"notin" lists become one rule per
 * aligned block of values). */
#define MAX_EXPANDED 1024

struct expand {
	scmp_filter_ctx ctx;
	const struct ward_seccomp_rule *rule;
	struct scmp_arg_cmp cmp[WARD_SECCOMP_MAX_CONDS];
	unsigned count;
};

static enum scmp_compare scmp_op(enum ward_seccomp_op op)
{
	switch (op) {
	case WARD_SECCOMP_EQ:
		return SCMP_CMP_EQ;
	case WARD_SECCOMP_NE:
		return SCMP_CMP_NE;
	case WARD_SECCOMP_LT:
		return SCMP_CMP_LT;
	case WARD_SECCOMP_LE:
		return SCMP_CMP_LE;
	case WARD_SECCOMP_GT:
		return SCMP_CMP_GT;
	case WARD_SECCOMP_GE:
		return SCMP_CMP_GE;
	case WARD_SECCOMP_MASKED_EQ:
	case WARD_SECCOMP_IN:
		return SCMP_CMP_MASKED_EQ;
	}
	return SCMP_CMP_EQ;
}

/* Add one rule per combination of the conditions' alternatives: a range
 * becomes the aligned power-of-two blocks that cover it, each one masked
 * equality on the low 32 bits (libseccomp allows one comparison per
 * argument in a rule, so a range cannot be two comparisons). */
static int expand(struct expand *x, unsigned i)
{
	const struct ward_seccomp_cond *c;

	if (i == x->rule->n_conds) {
		if (++x->count > MAX_EXPANDED)
			return -E2BIG;
		return seccomp_rule_add_array(x->ctx, x->rule->action, x->rule->nr,
					      x->rule->n_conds, x->cmp);
	}
	c = &x->rule->conds[i];
	if (c->op != WARD_SECCOMP_IN) {
		x->cmp[i] = (struct scmp_arg_cmp){ c->arg, scmp_op(c->op), c->mask, c->value };
		if (c->op != WARD_SECCOMP_MASKED_EQ)
			x->cmp[i].datum_a = c->value;
		return expand(x, i + 1);
	}
	for (unsigned r = 0; r < c->n_ranges; r++) {
		uint64_t lo = c->lo[r], hi = c->hi[r];

		while (lo <= hi) {
			uint64_t size = lo ? lo & -lo : 0x100000000ull;
			int ret;

			while (lo + size - 1 > hi)
				size >>= 1;
			x->cmp[i] = (struct scmp_arg_cmp){ c->arg, SCMP_CMP_MASKED_EQ,
							   0xffffffffull & ~(size - 1), lo };
			ret = expand(x, i + 1);
			if (ret < 0)
				return ret;
			lo += size;
		}
	}
	return 0;
}

static bool lifted(const struct ward_seccomp_rule *rule, const struct ward_seccomp_options *opts)
{
	return opts && ((opts->allow_ptrace && strcmp(rule->tag, "ptrace") == 0) ||
			(opts->allow_nested && strcmp(rule->tag, "nested") == 0));
}

/* Export the BPF through a memfd and read it back. */
static int export_bpf(scmp_filter_ctx ctx, const char *name, struct ward_seccomp_program *prog,
		      struct ward_error **err)
{
	_cleanup_close_ int fd = memfd_create("ward-seccomp", MFD_CLOEXEC);
	struct sock_filter *insns;
	struct stat st;
	size_t got = 0;
	int r;

	if (fd < 0)
		return ward_error_make(err, errno, "seccomp profile '%s': memfd_create", name);
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return ward_error_make(err, -r, "seccomp profile '%s': seccomp_export_bpf", name);
	if (fstat(fd, &st) < 0)
		return ward_error_make(err, errno, "seccomp profile '%s': stat memfd", name);
	if (st.st_size == 0 || st.st_size % (off_t)sizeof(struct sock_filter) ||
	    st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		return ward_error_make(err, EINVAL,
				       "seccomp profile '%s': exported program of %lld bytes", name,
				       (long long)st.st_size);
	insns = malloc((size_t)st.st_size);
	if (!insns)
		return ward_error_make(err, ENOMEM, "seccomp profile '%s'", name);
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, (char *)insns + got, (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(insns);
			return ward_error_make(err, n < 0 ? errno : EIO,
					       "seccomp profile '%s': read exported program", name);
		}
		got += (size_t)n;
	}
	prog->fprog.filter = insns;
	prog->fprog.len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
	return 0;
}

int ward_seccomp_compile(const struct ward_seccomp_profile *profile,
			 const struct ward_seccomp_options *opts, struct ward_seccomp_program **out,
			 struct ward_error **err)
{
	struct ward_seccomp_program *prog;
	scmp_filter_ctx ctx;
	int r;

	*out = NULL;
	ctx = seccomp_init(profile->default_action);
	if (!ctx)
		return ward_error_make(err, EINVAL, "seccomp profile '%s': seccomp_init",
				       profile->name);
	/* Only the native ABI is in the filter; a call made for any other ABI
	 * (int 0x80 on x86-64, an x32 number, 32-bit arm) kills the process. */
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	/* ward sets no_new_privs itself, before Landlock. */
	if (r == 0)
		r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (r < 0) {
		seccomp_release(ctx);
		return ward_error_make(err, -r, "seccomp profile '%s': seccomp_attr_set",
				       profile->name);
	}
	/* A binary tree keeps the per-call cost logarithmic in the rule count;
	 * older libseccomp without it falls back to a linear list. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);

	for (size_t i = 0; i < profile->n_rules; i++) {
		const struct ward_seccomp_rule *rule = &profile->rules[i];
		struct expand x = { .ctx = ctx, .rule = rule };

		if (lifted(rule, opts))
			continue;
		r = expand(&x, 0);
		if (r < 0) {
			seccomp_release(ctx);
			if (r == -E2BIG)
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "seccomp profile '%s' line %u: '%s' "
							    "expands to more than %d rules",
							    rule->source, rule->line, rule->syscall,
							    MAX_EXPANDED);
			if (r == -EEXIST)
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "seccomp profile '%s' line %u: '%s' has "
							    "the same conditions as an earlier rule "
							    "with another action",
							    rule->source, rule->line, rule->syscall);
			return ward_error_make(err, -r, "seccomp profile '%s' line %u: add rule for '%s'",
					       rule->source, rule->line, rule->syscall);
		}
	}

	prog = calloc(1, sizeof(*prog));
	if (!prog) {
		seccomp_release(ctx);
		return ward_error_make(err, ENOMEM, "seccomp profile '%s'", profile->name);
	}
	snprintf(prog->name, sizeof(prog->name), "%s", profile->name);
	r = export_bpf(ctx, profile->name, prog, err);
	seccomp_release(ctx);
	if (r < 0) {
		free(prog);
		return -1;
	}
	*out = prog;
	return 0;
}

void ward_seccomp_program_free(struct ward_seccomp_program *prog)
{
	if (!prog)
		return;
	free(prog->fprog.filter);
	free(prog);
}

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
