/* bpf.c — a profile compiled to classic BPF. Pure: no OS state touched.
 *
 * The kernel JIT-compiles a filter at every load, and for each system call
 * number runs it once more to find the calls it always allows (the
 * filter's cache): the load costs about 0.1 us per instruction in a VM,
 * and it is paid in every sandbox. So the program is kept short:
 *
 *   - the architecture first (any other ABI kills the process: i386 and
 *     x32 on x86-64, 32-bit arm on aarch64), then the number;
 *   - a binary search over the numbers that have rules, ending in a short
 *     list of equalities, so the per-call cost is logarithmic;
 *   - each rule a chain of argument tests, each a load and a jump or two:
 *     "in"/"notin" ranges are compared with jge/jgt on the low 32 bits
 *     (a masked-equality compiler, libseccomp's, needs up to 31 blocks a
 *     bound: the default profile was 553 instructions that way, against
 *     under 200 here), a flag test is one jset.
 *
 * minijail compiles its policies the same way, by hand. libseccomp still
 * names the system calls (profile.c).
 *
 * The program is written backwards, from its last instruction to its
 * first, so that every jump's target already has its place: a "label" is
 * the count of instructions written when the target was, and a jump
 * written now reaches it n - label instructions ahead. A conditional jump
 * reaches 255 ahead at most; a farther target gets a `ja` (32-bit
 * distance) just behind the jump.
 *
 * When several rules of one call match, the most restrictive action wins,
 * as between stacked filters in the kernel: the rules are tested in that
 * order (kill, trap, errno, ..., allow), in file order among equals. */
#include "filters/seccomp/seccomp-internal.h"
#include "ward/seccomp.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/util/util-internal.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define X32_SYSCALL_BIT 0x40000000u
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "seccomp: x86-64 and aarch64 only"
#endif

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "seccomp: the argument words are laid out for little-endian machines"
#endif
#define ARG_LO(i) ((uint32_t)(offsetof(struct seccomp_data, args) + 8 * (i)))
#define ARG_HI(i) (ARG_LO(i) + 4)

#define MAX_JUMP 255
#define MAX_RETS 16

struct emit {
	struct sock_filter insns[BPF_MAXINSNS]; /* the program in insns[cap - n .. cap) */
	unsigned n;
	bool full;
	/* the last return of each action written: reused while in reach */
	struct {
		uint32_t action;
		unsigned at;
	} rets[MAX_RETS];
	unsigned n_rets;
};

static unsigned put(struct emit *e, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (e->n == BPF_MAXINSNS) {
		e->full = true;
		return e->n;
	}
	e->n++;
	e->insns[BPF_MAXINSNS - e->n] = (struct sock_filter){ code, jt, jf, k };
	return e->n;
}

static unsigned load(struct emit *e, uint32_t offset)
{
	return put(e, BPF_LD | BPF_W | BPF_ABS, 0, 0, offset);
}

static unsigned ja(struct emit *e, unsigned target)
{
	return put(e, BPF_JMP | BPF_JA, 0, 0, e->n - target);
}

/* A return of action, one already written when a jump from here reaches
 * it, else a new one. */
static unsigned ret(struct emit *e, uint32_t action)
{
	unsigned i;

	for (i = 0; i < e->n_rets; i++)
		if (e->rets[i].action == action)
			break;
	if (i < e->n_rets && e->n - e->rets[i].at < MAX_JUMP)
		return e->rets[i].at;
	if (i == e->n_rets) {
		if (e->n_rets == MAX_RETS)
			i = MAX_RETS - 1; /* more actions than that: only reuse is lost */
		else
			e->n_rets++;
	}
	e->rets[i].action = action;
	e->rets[i].at = put(e, BPF_RET | BPF_K, 0, 0, action);
	return e->rets[i].at;
}

/* A conditional jump on A op k: to t when true, to f when false. A
 * trampoline for one target puts the other a step farther. */
static unsigned jump(struct emit *e, uint16_t op, uint32_t k, unsigned t, unsigned f)
{
	bool far_t = e->n - t > MAX_JUMP, far_f = e->n - f > MAX_JUMP;

	if (far_t && !far_f)
		far_f = e->n + 1 - f > MAX_JUMP;
	else if (far_f && !far_t)
		far_t = e->n + 1 - t > MAX_JUMP;
	if (far_f)
		f = ja(e, f);
	if (far_t)
		t = ja(e, t);
	return put(e, BPF_JMP | op | BPF_K, (uint8_t)(e->n - t), (uint8_t)(e->n - f), k);
}

static uint32_t lo32(uint64_t v)
{
	return (uint32_t)v;
}

static uint32_t hi32(uint64_t v)
{
	return (uint32_t)(v >> 32);
}

/* An unsigned 64-bit comparison, a word at a time: the high words decide
 * unless equal (to above or below), then op on the low words (BPF_JGT for
 * >, BPF_JGE for >=) goes to t_lo or f_lo. */
static unsigned compare(struct emit *e, unsigned arg, uint64_t v, uint16_t op, unsigned t_lo,
			unsigned f_lo, unsigned above, unsigned below)
{
	unsigned t = jump(e, op, lo32(v), t_lo, f_lo);

	t = load(e, ARG_LO(arg));
	if (hi32(v) != 0) /* after "not above", 0 can only be equal */
		t = jump(e, BPF_JEQ, hi32(v), t, below);
	if (hi32(v) != UINT32_MAX) /* nothing is above it */
		t = jump(e, BPF_JGT, hi32(v), above, t);
	return load(e, ARG_HI(arg));
}

/* (word & mask) == value for one 32-bit word, to next if so, else fail. */
static unsigned masked_word(struct emit *e, uint32_t offset, uint32_t mask, uint32_t value,
			    unsigned next, unsigned fail)
{
	if (mask == 0)
		return next; /* value is 0 too: the caller checked */
	if (value == 0)
		jump(e, BPF_JSET, mask, fail, next);
	else if (value == mask && !(mask & (mask - 1)))
		jump(e, BPF_JSET, mask, next, fail);
	else {
		jump(e, BPF_JEQ, value, next, fail);
		if (mask != UINT32_MAX)
			put(e, BPF_ALU | BPF_AND | BPF_K, 0, 0, mask);
	}
	return load(e, offset);
}

/* One condition: to next when it holds, to fail when not. Returns its
 * first instruction. */
static unsigned cond(struct emit *e, const struct ward_seccomp_cond *c, unsigned next,
		     unsigned fail)
{
	unsigned a = c->arg, t;

	switch (c->op) {
	case WARD_SECCOMP_EQ:
		t = jump(e, BPF_JEQ, lo32(c->value), next, fail);
		t = load(e, ARG_LO(a));
		jump(e, BPF_JEQ, hi32(c->value), t, fail);
		return load(e, ARG_HI(a));
	case WARD_SECCOMP_NE:
		t = jump(e, BPF_JEQ, lo32(c->value), fail, next);
		t = load(e, ARG_LO(a));
		jump(e, BPF_JEQ, hi32(c->value), t, next);
		return load(e, ARG_HI(a));
	case WARD_SECCOMP_GT:
		return compare(e, a, c->value, BPF_JGT, next, fail, next, fail);
	case WARD_SECCOMP_GE:
		return compare(e, a, c->value, BPF_JGE, next, fail, next, fail);
	case WARD_SECCOMP_LT: /* not >= */
		return compare(e, a, c->value, BPF_JGE, fail, next, fail, next);
	case WARD_SECCOMP_LE: /* not > */
		return compare(e, a, c->value, BPF_JGT, fail, next, fail, next);
	case WARD_SECCOMP_MASKED_EQ:
		if (c->value & ~c->mask)
			return fail; /* bits the mask clears can never be set */
		t = masked_word(e, ARG_LO(a), lo32(c->mask), lo32(c->value), next, fail);
		return masked_word(e, ARG_HI(a), hi32(c->mask), hi32(c->value), t, fail);
	case WARD_SECCOMP_IN:
		/* Sorted, disjoint ranges, tested from the lowest: a value above
		 * one goes on to the next; one below it is below the rest too. */
		if (c->n_ranges == 0)
			return fail;
		t = fail;
		for (unsigned r = c->n_ranges; r-- > 0;) {
			uint32_t lo = c->lo[r], hi = c->hi[r];

			if (lo == hi)
				t = jump(e, BPF_JEQ, lo, next, t);
			else if (hi == UINT32_MAX)
				t = jump(e, BPF_JGE, lo, next, fail);
			else if (lo == 0)
				t = jump(e, BPF_JGT, hi, t, next);
			else {
				unsigned above = t;

				t = jump(e, BPF_JGE, lo, next, fail);
				t = jump(e, BPF_JGT, hi, above, t);
			}
		}
		return load(e, ARG_LO(a));
	}
	return fail;
}

/* The kernel's precedence between actions: lower first. */
static int precedence(uint32_t action)
{
	return (int32_t)(action & SECCOMP_RET_ACTION_FULL);
}

struct call {
	int nr;
	const struct ward_seccomp_rule *rules[64];
	unsigned n;
	unsigned body;
};

static bool lifted(const struct ward_seccomp_rule *rule, const struct ward_seccomp_options *opts)
{
	return opts && ((opts->allow_ptrace && strcmp(rule->tag, "ptrace") == 0) ||
			(opts->allow_nested && strcmp(rule->tag, "nested") == 0));
}

/* One call's rules, most restrictive first: the first to match returns. */
static unsigned body(struct emit *e, struct call *c, uint32_t default_action)
{
	unsigned after = ret(e, default_action);

	for (unsigned j = c->n; j-- > 0;) {
		const struct ward_seccomp_rule *r = c->rules[j];
		unsigned t = ret(e, r->action);

		for (unsigned k = r->n_conds; k-- > 0;)
			t = cond(e, &r->conds[k], t, after);
		after = t;
	}
	return after;
}

/* A = the number: a binary search over calls[lo, hi), each leaf a few
 * equalities. */
static unsigned dispatch(struct emit *e, const struct call *calls, size_t lo, size_t hi,
			 uint32_t default_action)
{
	size_t mid;
	unsigned left, right, t;

	if (hi - lo <= 4) {
		t = ret(e, default_action);
		for (size_t i = hi; i-- > lo;)
			t = jump(e, BPF_JEQ, (uint32_t)calls[i].nr, calls[i].body, t);
		return t;
	}
	mid = lo + (hi - lo) / 2;
	right = dispatch(e, calls, mid, hi, default_action);
	left = dispatch(e, calls, lo, mid, default_action);
	return jump(e, BPF_JGE, (uint32_t)calls[mid].nr, right, left);
}

static int by_nr(const void *a, const void *b)
{
	const struct call *x = a, *y = b;

	return (x->nr > y->nr) - (x->nr < y->nr);
}

static int add_rule(struct call *calls, size_t *n_calls, const struct ward_seccomp_rule *r)
{
	size_t i;
	unsigned j;

	for (i = 0; i < *n_calls && calls[i].nr != r->nr; i++)
		;
	if (i == *n_calls) {
		calls[i].nr = r->nr;
		calls[i].n = 0;
		(*n_calls)++;
	}
	if (calls[i].n == ARRAY_SIZE(calls[i].rules))
		return -1;
	/* insertion by precedence, after its equals */
	for (j = calls[i].n;
	     j > 0 && precedence(calls[i].rules[j - 1]->action) > precedence(r->action); j--)
		calls[i].rules[j] = calls[i].rules[j - 1];
	calls[i].rules[j] = r;
	calls[i].n++;
	return 0;
}

int ward_seccomp_compile(const struct ward_seccomp_profile *profile,
			 const struct ward_seccomp_options *opts, struct ward_seccomp_program **out,
			 struct ward_error **err)
{
	_cleanup_free_ struct emit *e = calloc(1, sizeof(*e));
	_cleanup_free_ struct call *calls = calloc(profile->n_rules + 1, sizeof(*calls));
	struct ward_seccomp_program *prog;
	size_t n_calls = 0, i;
	unsigned t, kill, tree;

	*out = NULL;
	if (!e || !calls)
		return ward_error_make(err, ENOMEM, "seccomp profile '%s'", profile->name);
	for (i = 0; i < profile->n_rules; i++) {
		const struct ward_seccomp_rule *r = &profile->rules[i];

		/* a call this architecture lacks (a negative number) */
		if (r->nr < 0 || lifted(r, opts))
			continue;
		if (add_rule(calls, &n_calls, r) < 0)
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "seccomp profile '%s' line %u: more than %zu "
						    "rules for '%s'",
						    r->source, r->line, ARRAY_SIZE(calls[0].rules),
						    r->syscall);
	}
	qsort(calls, n_calls, sizeof(*calls), by_nr);

	/* backwards: the calls' rules, the search, the number's checks, the
	 * architecture's */
	ret(e, profile->default_action);
	for (i = n_calls; i-- > 0;)
		calls[i].body = body(e, &calls[i], profile->default_action);
	tree = n_calls ? dispatch(e, calls, 0, n_calls, profile->default_action)
		       : ret(e, profile->default_action);
#ifdef X32_SYSCALL_BIT
	/* x32's numbers have bit 30 set; -1 is no call at all (a tracer's
	 * skip), left to the default */
	kill = ret(e, SECCOMP_RET_KILL_PROCESS);
	t = jump(e, BPF_JEQ, UINT32_MAX, tree, kill);
	tree = jump(e, BPF_JGE, X32_SYSCALL_BIT, t, tree);
#endif
	t = load(e, (uint32_t)offsetof(struct seccomp_data, nr));
	kill = ret(e, SECCOMP_RET_KILL_PROCESS);
	jump(e, BPF_JEQ, NATIVE_ARCH, t, kill);
	load(e, (uint32_t)offsetof(struct seccomp_data, arch));
	if (e->full)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "seccomp profile '%s': the program is longer than the "
					    "kernel's %d instructions",
					    profile->name, BPF_MAXINSNS);

	prog = calloc(1, sizeof(*prog));
	if (prog)
		prog->fprog.filter = malloc(e->n * sizeof(struct sock_filter));
	if (!prog || !prog->fprog.filter) {
		free(prog);
		return ward_error_make(err, ENOMEM, "seccomp profile '%s'", profile->name);
	}
	memcpy(prog->fprog.filter, e->insns + BPF_MAXINSNS - e->n,
	       e->n * sizeof(struct sock_filter));
	prog->fprog.len = (unsigned short)e->n;
	snprintf(prog->name, sizeof(prog->name), "%s", profile->name);
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
