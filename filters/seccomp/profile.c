/* profile.c — the profile table: built-in profiles and the parser.
 *
 * Parsing is pure (system call names are resolved with libseccomp's tables,
 * which touch no OS state), so every malformed line is unit-tested. */
#include "ward/seccomp.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "runtime/util/util-internal.h"

/* The built-in profiles are the text files next to this one, embedded as
 * they are so the table people read is the table ward runs. */
#define EMBED(sym, file)                                                                           \
	__asm__(".section .rodata\n"                                                               \
		".globl " #sym "\n"                                                                \
		".hidden " #sym "\n"                                                               \
		".type " #sym ", @object\n" #sym ":\n"                                             \
		".incbin \"" file "\"\n"                                                           \
		".byte 0\n"                                                                        \
		".previous\n")

EMBED(ward_seccomp_default_profile, "filters/seccomp/seccomp-default.profile");
EMBED(ward_seccomp_strict_profile, "filters/seccomp/seccomp-strict.profile");
extern const char ward_seccomp_default_profile[] __attribute__((visibility("hidden")));
extern const char ward_seccomp_strict_profile[] __attribute__((visibility("hidden")));

#define MAX_INCLUDE_DEPTH 4

const char *ward_seccomp_profile_text(const char *name)
{
	if (strcmp(name, "default") == 0)
		return ward_seccomp_default_profile;
	if (strcmp(name, "strict") == 0)
		return ward_seccomp_strict_profile;
	return NULL;
}

static const struct constant {
	const char *name;
	uint64_t value;
} constants[] = {
	{ "AF_UNSPEC", AF_UNSPEC },
	{ "AF_UNIX", AF_UNIX },
	{ "AF_INET", AF_INET },
	{ "AF_INET6", AF_INET6 },
	{ "AF_NETLINK", AF_NETLINK },
	{ "AF_PACKET", AF_PACKET },
	{ "AF_VSOCK", AF_VSOCK },
	{ "AF_ALG", AF_ALG },
	{ "AF_BLUETOOTH", AF_BLUETOOTH },
	{ "SOCK_STREAM", SOCK_STREAM },
	{ "SOCK_DGRAM", SOCK_DGRAM },
	{ "SOCK_RAW", SOCK_RAW },
	{ "SOCK_SEQPACKET", SOCK_SEQPACKET },
	{ "SOCK_PACKET", SOCK_PACKET },
	{ "SOCK_TYPE_MASK", 0xf },
	{ "SOCK_NONBLOCK", SOCK_NONBLOCK },
	{ "SOCK_CLOEXEC", SOCK_CLOEXEC },
	{ "NETLINK_ROUTE", NETLINK_ROUTE },
	{ "NETLINK_SOCK_DIAG", NETLINK_SOCK_DIAG },
	{ "NETLINK_AUDIT", NETLINK_AUDIT },
	{ "NETLINK_KOBJECT_UEVENT", NETLINK_KOBJECT_UEVENT },
	{ "CLONE_NEWNS", CLONE_NEWNS },
	{ "CLONE_NEWCGROUP", CLONE_NEWCGROUP },
	{ "CLONE_NEWUTS", CLONE_NEWUTS },
	{ "CLONE_NEWIPC", CLONE_NEWIPC },
	{ "CLONE_NEWUSER", CLONE_NEWUSER },
	{ "CLONE_NEWPID", CLONE_NEWPID },
	{ "CLONE_NEWNET", CLONE_NEWNET },
	{ "CLONE_NEWTIME", 0x80 },
	{ "CLONE_THREAD", CLONE_THREAD },
	{ "CLONE_VM", CLONE_VM },
	{ "TIOCSTI", TIOCSTI },
	{ "TIOCLINUX", TIOCLINUX },
	{ "PER_LINUX", PER_LINUX },
	{ "S_ISUID", S_ISUID },
	{ "S_ISGID", S_ISGID },
	{ "O_CREAT", O_CREAT },
	{ "O_TMPFILE", O_TMPFILE },
};

struct parser {
	struct ward_seccomp_profile *p;
	size_t cap;
	const char *source; /* the profile being read */
	unsigned line;
	unsigned default_line; /* where @default was set, 0 if not */
	struct ward_error **err;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parser *ps, const char *fmt, ...)
{
	char what[WARD_ERROR_MESSAGE_MAX - 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	ward_error_make_kind(ps->err, WARD_ERR_INVALID_PARAMETERS, 0,
			     "seccomp profile '%s' line %u: %s", ps->source, ps->line, what);
	if (ps->err)
		ward_error_set_rule(*ps->err, "seccomp");
	return -1;
}

/* ---- actions and values ------------------------------------------------------ */

static int errno_by_name(const char *name)
{
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);

		if (n && strcmp(n, name) == 0)
			return e;
	}
	return -1;
}

static int parse_action(struct parser *ps, const char *s, uint32_t *action)
{
	int e;

	if (strcmp(s, "allow") == 0)
		*action = SECCOMP_RET_ALLOW;
	else if (strcmp(s, "kill") == 0 || strcmp(s, "kill-process") == 0)
		*action = SECCOMP_RET_KILL_PROCESS;
	else if (strcmp(s, "kill-thread") == 0)
		*action = SECCOMP_RET_KILL_THREAD;
	else if (strcmp(s, "trap") == 0)
		*action = SECCOMP_RET_TRAP;
	else if (strcmp(s, "log") == 0)
		*action = SECCOMP_RET_LOG;
	else if (s[0] == 'E' && (e = errno_by_name(s)) > 0)
		*action = SECCOMP_RET_ERRNO | ((uint32_t)e & SECCOMP_RET_DATA);
	else
		return fail(ps, "unknown action '%s' (an errno name such as EPERM, or allow, "
				"kill, kill-thread, trap, log)",
			    s);
	return 0;
}

/* One term: a number or a constant name. */
static int parse_term(struct parser *ps, const char *s, size_t len, uint64_t *out)
{
	char buf[64], *end;

	if (len == 0)
		return fail(ps, "missing value");
	if (len >= sizeof(buf))
		return fail(ps, "value '%.*s...' is too long", 16, s);
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (isdigit((unsigned char)buf[0])) {
		errno = 0;
		*out = strtoull(buf, &end, 0);
		if (errno || *end)
			return fail(ps, "bad number '%s'", buf);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(constants); i++)
		if (strcmp(constants[i].name, buf) == 0) {
			*out = constants[i].value;
			return 0;
		}
	return fail(ps, "unknown constant '%s'", buf);
}

/* TERM|TERM|... */
static int parse_value(struct parser *ps, const char *s, size_t len, uint64_t *out)
{
	*out = 0;
	for (;;) {
		const char *bar = memchr(s, '|', len);
		size_t n = bar ? (size_t)(bar - s) : len;
		uint64_t v = 0;

		if (parse_term(ps, s, n, &v) < 0)
			return -1;
		*out |= v;
		if (!bar)
			return 0;
		len -= n + 1;
		s = bar + 1;
	}
}

/* ---- conditions ----------------------------------------------------------------- */

static int cmp_range(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* "V,LO..HI,..." into sorted, merged ranges; negated for "notin". */
static int parse_set(struct parser *ps, const char *s, size_t len, bool negate,
		     struct ward_seccomp_cond *c)
{
	uint64_t r[WARD_SECCOMP_MAX_RANGES][2];
	size_t n = 0, m = 0;

	while (len > 0 || n == 0) {
		const char *comma = memchr(s, ',', len);
		size_t item = comma ? (size_t)(comma - s) : len;
		const char *dots = NULL;
		uint64_t lo, hi;

		for (size_t i = 0; i + 1 < item; i++)
			if (s[i] == '.' && s[i + 1] == '.') {
				dots = s + i;
				break;
			}
		if (n == WARD_SECCOMP_MAX_RANGES)
			return fail(ps, "more than %d values in one list", WARD_SECCOMP_MAX_RANGES);
		if (dots) {
			if (parse_value(ps, s, (size_t)(dots - s), &lo) < 0 ||
			    parse_value(ps, dots + 2, item - (size_t)(dots - s) - 2, &hi) < 0)
				return -1;
		} else {
			if (parse_value(ps, s, item, &lo) < 0)
				return -1;
			hi = lo;
		}
		if (lo > 0xffffffffu || hi > 0xffffffffu)
			return fail(ps, "'%.*s' does not fit in 32 bits (in and notin compare the "
					"low 32 bits)",
				    (int)item, s);
		if (lo > hi)
			return fail(ps, "empty range '%.*s'", (int)item, s);
		r[n][0] = lo;
		r[n][1] = hi;
		n++;
		if (!comma)
			break;
		len -= item + 1;
		s = comma + 1;
		if (len == 0)
			return fail(ps, "missing value after ','");
	}
	qsort(r, n, sizeof(r[0]), cmp_range);
	for (size_t i = 0; i < n; i++) { /* merge overlapping and adjacent ranges */
		if (m && r[i][0] <= r[m - 1][1] + 1) {
			if (r[i][1] > r[m - 1][1])
				r[m - 1][1] = r[i][1];
			continue;
		}
		r[m][0] = r[i][0];
		r[m][1] = r[i][1];
		m++;
	}
	c->n_ranges = 0;
	if (!negate) {
		for (size_t i = 0; i < m; i++) {
			c->lo[i] = (uint32_t)r[i][0];
			c->hi[i] = (uint32_t)r[i][1];
		}
		c->n_ranges = (unsigned)m;
		return 0;
	}
	{
		uint64_t next = 0;

		for (size_t i = 0; i <= m; i++) {
			uint64_t end = i < m ? r[i][0] : 0x100000000ull;

			if (end > next) {
				if (c->n_ranges == WARD_SECCOMP_MAX_RANGES)
					return fail(ps, "more than %d ranges in one list",
						    WARD_SECCOMP_MAX_RANGES);
				c->lo[c->n_ranges] = (uint32_t)next;
				c->hi[c->n_ranges] = (uint32_t)(end - 1);
				c->n_ranges++;
			}
			if (i < m)
				next = r[i][1] + 1;
		}
	}
	if (c->n_ranges == 0)
		return fail(ps, "'notin' leaves no value to match");
	return 0;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static size_t word_len(const char *s)
{
	size_t n = 0;

	while (s[n] && s[n] != ' ' && s[n] != '\t')
		n++;
	return n;
}

static bool starts_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	return strncmp(s, w, n) == 0 && (s[n] == ' ' || s[n] == '\t' || s[n] == '\0');
}

/* One condition at *sp; advances *sp. */
static int parse_cond(struct parser *ps, const char **sp, struct ward_seccomp_cond *c)
{
	static const struct {
		const char *text;
		enum ward_seccomp_op op;
	} ops[] = { { "==", WARD_SECCOMP_EQ }, { "!=", WARD_SECCOMP_NE }, { "<=", WARD_SECCOMP_LE },
		    { ">=", WARD_SECCOMP_GE }, { "<", WARD_SECCOMP_LT },  { ">", WARD_SECCOMP_GT } };
	const char *s = *sp;
	size_t n;

	memset(c, 0, sizeof(*c));
	if (strncmp(s, "arg", 3) != 0 || !isdigit((unsigned char)s[3]))
		return fail(ps, "expected a condition such as 'arg0==1' at '%.*s'",
			    (int)word_len(s), s);
	if (s[3] > '5' || isdigit((unsigned char)s[4]))
		return fail(ps, "argument 'arg%.*s' out of range (arg0 to arg5)",
			    (int)strspn(s + 3, "0123456789"), s + 3);
	c->arg = (unsigned)(s[3] - '0');
	s = skip_ws(s + 4);

	if (starts_word(s, "in") || starts_word(s, "notin")) {
		bool negate = s[0] == 'n';

		c->op = WARD_SECCOMP_IN;
		s = skip_ws(s + (negate ? 5 : 2));
		n = word_len(s);
		if (n == 0)
			return fail(ps, "'%s' needs a list of values", negate ? "notin" : "in");
		if (parse_set(ps, s, n, negate, c) < 0)
			return -1;
		*sp = s + n;
		return 0;
	}
	if (*s == '&') {
		s = skip_ws(s + 1);
		n = 0;
		while (s[n] && s[n] != ' ' && s[n] != '\t' && s[n] != '=')
			n++;
		if (parse_value(ps, s, n, &c->mask) < 0)
			return -1;
		s = skip_ws(s + n);
		if (strncmp(s, "==", 2) != 0)
			return fail(ps, "a mask must be followed by '==' at '%.*s'",
				    (int)word_len(s), s);
		c->op = WARD_SECCOMP_MASKED_EQ;
		s = skip_ws(s + 2);
	} else {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(ops); i++)
			if (strncmp(s, ops[i].text, strlen(ops[i].text)) == 0)
				break;
		if (i == ARRAY_SIZE(ops))
			return fail(ps, "unknown operator at '%.*s' (==, !=, <, <=, >, >=, &MASK==, "
					"in, notin)",
				    (int)word_len(s), s);
		c->op = ops[i].op;
		s = skip_ws(s + strlen(ops[i].text));
	}
	n = word_len(s);
	if (parse_value(ps, s, n, &c->value) < 0)
		return -1;
	if (c->op == WARD_SECCOMP_MASKED_EQ && (c->value & ~c->mask))
		return fail(ps, "value 0x%llx has bits outside the mask 0x%llx: never matches",
			    (unsigned long long)c->value, (unsigned long long)c->mask);
	*sp = s + n;
	return 0;
}

/* ---- lines ------------------------------------------------------------------------ */

static int parse_text(struct parser *ps, const char *source, const char *text, int depth);

static int directive(struct parser *ps, char *s, int depth)
{
	size_t n = word_len(s);
	char *arg = (char *)skip_ws(s + n);
	size_t an = word_len(arg);

	if (*skip_ws(arg + an))
		return fail(ps, "unexpected '%s' after '%.*s %.*s'", skip_ws(arg + an), (int)n, s,
			    (int)an, arg);
	arg[an] = '\0';
	if (n == 8 && strncmp(s, "@default", 8) == 0) {
		if (!an)
			return fail(ps, "'@default' needs an action");
		if (ps->default_line)
			return fail(ps, "the default action is already set (line %u)",
				    ps->default_line);
		ps->default_line = ps->line;
		return parse_action(ps, arg, &ps->p->default_action);
	}
	if (n == 8 && strncmp(s, "@include", 8) == 0) {
		const char *text, *saved_source = ps->source;
		unsigned saved_line = ps->line;
		int r;

		if (!an)
			return fail(ps, "'@include' needs a built-in profile name");
		text = ward_seccomp_profile_text(arg);
		if (!text)
			return fail(ps, "unknown built-in profile '%s' (default, strict)", arg);
		if (depth >= MAX_INCLUDE_DEPTH)
			return fail(ps, "includes nested deeper than %d", MAX_INCLUDE_DEPTH);
		r = parse_text(ps, arg, text, depth + 1);
		ps->source = saved_source;
		ps->line = saved_line;
		return r;
	}
	return fail(ps, "unknown directive '%.*s' (@default, @include)", (int)n, s);
}

static int rule_line(struct parser *ps, char *s)
{
	struct ward_seccomp_rule r = { 0 };
	size_t n = word_len(s);
	char *rest, *tag;
	bool seen[WARD_SECCOMP_MAX_CONDS] = { false };

	if (n >= sizeof(r.syscall))
		return fail(ps, "system call name '%.*s...' is too long", 16, s);
	memcpy(r.syscall, s, n);
	r.syscall[n] = '\0';
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
			return fail(ps, "bad system call name '%s'", r.syscall);
	r.nr = seccomp_syscall_resolve_name(r.syscall);
	if (r.nr == __NR_SCMP_ERROR)
		return fail(ps, "unknown system call '%s'", r.syscall);
	s = (char *)skip_ws(s + n);
	n = word_len(s);
	if (n == 0)
		return fail(ps, "'%s' has no action", r.syscall);
	{
		char action[64];

		snprintf(action, sizeof(action), "%.*s", (int)n, s);
		if (parse_action(ps, action, &r.action) < 0)
			return -1;
	}
	rest = (char *)skip_ws(s + n);

	/* The tag, if any, ends the line. */
	tag = strchr(rest, '@');
	if (tag) {
		size_t tn = word_len(tag);

		if (*skip_ws(tag + tn))
			return fail(ps, "the tag '%.*s' must end the line", (int)tn, tag);
		if (tn == 1)
			return fail(ps, "empty tag '@'");
		if (tn - 1 >= sizeof(r.tag))
			return fail(ps, "tag '%.*s' is too long", (int)tn, tag);
		for (size_t i = 1; i < tn; i++)
			if (!islower((unsigned char)tag[i]) && !isdigit((unsigned char)tag[i]) &&
			    tag[i] != '-')
				return fail(ps, "bad tag '%.*s' (lowercase letters, digits, '-')",
					    (int)tn, tag);
		memcpy(r.tag, tag + 1, tn - 1);
		*tag = '\0';
	}
	while (*(rest = (char *)skip_ws(rest))) {
		struct ward_seccomp_cond *c = &r.conds[r.n_conds];
		const char *p = rest;

		if (r.n_conds == WARD_SECCOMP_MAX_CONDS)
			return fail(ps, "more than %d conditions", WARD_SECCOMP_MAX_CONDS);
		if (parse_cond(ps, &p, c) < 0)
			return -1;
		if (seen[c->arg])
			return fail(ps, "arg%u is compared twice in one rule (write two rules, "
					"or use 'in'/'notin')",
				    c->arg);
		seen[c->arg] = true;
		r.n_conds++;
		rest = (char *)p;
	}

	snprintf(r.source, sizeof(r.source), "%s", ps->source);
	r.line = ps->line;
	if (ps->p->n_rules == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 64;
		struct ward_seccomp_rule *rules = realloc(ps->p->rules, cap * sizeof(*rules));

		if (!rules)
			return ward_error_make(ps->err, ENOMEM, "seccomp profile '%s'", ps->source);
		ps->p->rules = rules;
		ps->cap = cap;
	}
	ps->p->rules[ps->p->n_rules++] = r;
	return 0;
}

static int parse_text(struct parser *ps, const char *source, const char *text, int depth)
{
	_cleanup_free_ char *copy = strdup(text);
	char *line, *next;

	if (!copy)
		return ward_error_make(ps->err, ENOMEM, "seccomp profile '%s'", source);
	ps->source = source;
	ps->line = 0;
	for (line = copy; line; line = next) {
		char *hash, *s;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ps->line++;
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (char *t = line; *t; t++) {
			if (*t == '\r' && t[1] == '\0')
				*t = '\0';
			else if (*t != '\t' && !isprint((unsigned char)*t))
				return fail(ps, "unexpected byte 0x%02x", (unsigned char)*t);
		}
		s = (char *)skip_ws(line);
		if (!*s)
			continue;
		if (*s == '@') {
			if (directive(ps, s, depth) < 0)
				return -1;
			/* an include leaves ps->source and ps->line as they were */
			continue;
		}
		if (rule_line(ps, s) < 0)
			return -1;
	}
	return 0;
}

static const char *action_name(uint32_t action, char *buf, size_t size)
{
	switch (action & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
		return "allow";
	case SECCOMP_RET_KILL_PROCESS:
		return "kill";
	case SECCOMP_RET_KILL_THREAD:
		return "kill-thread";
	case SECCOMP_RET_TRAP:
		return "trap";
	case SECCOMP_RET_LOG:
		return "log";
	case SECCOMP_RET_ERRNO: {
		const char *n = strerrorname_np((int)(action & SECCOMP_RET_DATA));

		snprintf(buf, size, "%s", n ? n : "errno");
		return buf;
	}
	}
	return "?";
}

static bool same_cond(const struct ward_seccomp_cond *a, const struct ward_seccomp_cond *b)
{
	if (a->arg != b->arg || a->op != b->op)
		return false;
	if (a->op != WARD_SECCOMP_IN)
		return a->value == b->value && (a->op != WARD_SECCOMP_MASKED_EQ || a->mask == b->mask);
	if (a->n_ranges != b->n_ranges)
		return false;
	for (unsigned i = 0; i < a->n_ranges; i++)
		if (a->lo[i] != b->lo[i] || a->hi[i] != b->hi[i])
			return false;
	return true;
}

/* The same conditions, in any order (an argument is compared once a rule). */
static bool same_conds(const struct ward_seccomp_rule *a, const struct ward_seccomp_rule *b)
{
	if (a->n_conds != b->n_conds)
		return false;
	for (unsigned i = 0; i < a->n_conds; i++) {
		unsigned j;

		for (j = 0; j < b->n_conds && b->conds[j].arg != a->conds[i].arg; j++)
			;
		if (j == b->n_conds || !same_cond(&a->conds[i], &b->conds[j]))
			return false;
	}
	return true;
}

/* What is most likely a mistake, said with the line: a rule whose action
 * is the default, and a call with two rules of different actions where
 * one always takes the call (no conditions) or both take the same calls.
 * (Otherwise, where rules of different actions both match, the most
 * restrictive action wins: bpf.c.) */
static int check_rules(struct parser *ps)
{
	const struct ward_seccomp_profile *p = ps->p;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ward_seccomp_rule *r = &p->rules[i];
		char buf[32], buf2[32];

		ps->source = r->source;
		ps->line = r->line;
		if (r->action == p->default_action)
			return fail(ps, "'%s %s' repeats the default action", r->syscall,
				    action_name(r->action, buf, sizeof(buf)));
		for (size_t j = 0; j < i; j++) {
			const struct ward_seccomp_rule *q = &p->rules[j];

			if (q->nr != r->nr || q->action == r->action)
				continue;
			if (q->n_conds && r->n_conds) {
				if (!same_conds(q, r))
					continue;
				return fail(ps, "'%s' has the same conditions as an earlier rule "
						"with another action (profile '%s' line %u)",
					    r->syscall, q->source, q->line);
			}
			return fail(ps, "'%s %s' conflicts with '%s %s' (profile '%s' line %u): "
					"a rule without conditions takes every call",
				    r->syscall, action_name(r->action, buf, sizeof(buf)), q->syscall,
				    action_name(q->action, buf2, sizeof(buf2)), q->source, q->line);
		}
	}
	return 0;
}

int ward_seccomp_profile_parse(const char *name, const char *text,
			       struct ward_seccomp_profile **out, struct ward_error **err)
{
	struct ward_seccomp_profile *p = calloc(1, sizeof(*p));
	struct parser ps = { .p = p, .err = err };

	*out = NULL;
	if (!p)
		return ward_error_make(err, ENOMEM, "seccomp profile '%s'", name);
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->default_action = SECCOMP_RET_ALLOW;
	if (parse_text(&ps, name, text, 0) < 0) {
		ward_seccomp_profile_free(p);
		return -1;
	}
	if (check_rules(&ps) < 0) {
		ward_seccomp_profile_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int ward_seccomp_profile_builtin(const char *name, struct ward_seccomp_profile **out,
				 struct ward_error **err)
{
	const char *text = ward_seccomp_profile_text(name);

	*out = NULL;
	if (!text) {
		ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
				     "unknown seccomp profile '%s' (default, strict, off, or a file)",
				     name);
		if (err)
			ward_error_set_rule(*err, "seccomp");
		return -1;
	}
	return ward_seccomp_profile_parse(name, text, out, err);
}

#define PROFILE_FILE_MAX (1024 * 1024)

int ward_seccomp_profile_load_file(const char *path, struct ward_seccomp_profile **out,
				   struct ward_error **err)
{
	/* rules for the sandbox, named by a person or a policy: as a policy
	 * file, never through a final symbolic link or from a file or
	 * directory another user can write (util-internal.h) */
	_cleanup_close_ int fd = ward_hostpath_open_file("seccomp profile", path,
							 WARD_HOSTPATH_CONFIG, O_RDONLY, 0, err);
	_cleanup_free_ char *text = NULL;
	struct stat st;
	size_t got = 0;

	*out = NULL;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return ward_error_make(err, errno, "stat seccomp profile '%s'", path);
	if (!S_ISREG(st.st_mode))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "seccomp profile '%s' is not a regular file", path);
	if (st.st_size > PROFILE_FILE_MAX)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "seccomp profile '%s' is larger than %d bytes", path,
					    PROFILE_FILE_MAX);
	text = malloc((size_t)st.st_size + 1);
	if (!text)
		return ward_error_make(err, ENOMEM, "seccomp profile '%s'", path);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ward_error_make(err, errno, "read seccomp profile '%s'", path);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	text[got] = '\0';
	if (strlen(text) != got)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "seccomp profile '%s' contains a NUL byte", path);
	return ward_seccomp_profile_parse(path, text, out, err);
}

void ward_seccomp_profile_free(struct ward_seccomp_profile *profile)
{
	if (!profile)
		return;
	free(profile->rules);
	free(profile);
}
