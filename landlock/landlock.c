/* landlock.c — Landlock ABI negotiation, the plan (pure), and applying it.
 *
 * The plan is computed in the supervisor from the configuration and the
 * kernel's ABI, following samples/landlock/sandboxer.c: take every right the
 * newest known ABI has, then strip what the kernel's ABI lacks. Applying it in
 * the sandbox's init only makes system calls. */
#include "ward/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock/landlock-abi.h"
#include "runtime/util/util-internal.h"

#define FS_ABI1                                                                                    \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
	 LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR |                              \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |                            \
	 LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |  \
	 LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Rights that make sense on a file (not a directory) rule; the kernel refuses
 * the others with EINVAL. */
#define FS_FILE_RIGHTS                                                                             \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
	 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

#define FS_READ                                                                                    \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)

/* Everything a work directory needs; device creation stays denied. */
#define FS_READ_WRITE                                                                              \
	(FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |                  \
	 LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | \
	 LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM |  \
	 LANDLOCK_ACCESS_FS_REFER | LANDLOCK_ACCESS_FS_TRUNCATE)

/* `> /dev/null` opens with O_TRUNC, which needs the truncate right (ABI 3).
 * Device ioctls (ABI 5) stay allowed on these harmless nodes so that
 * isatty() on `< /dev/null` fails with ENOTTY as everywhere, not EACCES. */
#define FS_DEV                                                                                     \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* Terminals need their ioctls (tcgetattr, TIOCGWINSZ...), checked from ABI 5. */
#define FS_TTY (FS_DEV | LANDLOCK_ACCESS_FS_READ_FILE)

enum right_kind { RIGHT_FS, RIGHT_NET, RIGHT_SCOPE };

static const struct right {
	enum right_kind kind;
	uint64_t bit;
	int abi;
	const char *name;
	unsigned need; /* the WARD_LANDLOCK_NEED_* it belongs to */
} rights[] = {
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_EXECUTE, 1, "fs.execute", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_WRITE_FILE, 1, "fs.write_file", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_READ_FILE, 1, "fs.read_file", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_READ_DIR, 1, "fs.read_dir", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_REMOVE_DIR, 1, "fs.remove_dir", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_REMOVE_FILE, 1, "fs.remove_file", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_MAKE_CHAR, 1, "fs.make_char", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_MAKE_DIR, 1, "fs.make_dir", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_MAKE_REG, 1, "fs.make_reg", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_MAKE_SOCK, 1, "fs.make_sock", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_MAKE_FIFO, 1, "fs.make_fifo", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_MAKE_BLOCK, 1, "fs.make_block", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_MAKE_SYM, 1, "fs.make_sym", WARD_LANDLOCK_NEED_FS },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_REFER, 2, "fs.refer", WARD_LANDLOCK_NEED_REFER },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_TRUNCATE, 3, "fs.truncate", WARD_LANDLOCK_NEED_TRUNCATE },
	{ RIGHT_NET, LANDLOCK_ACCESS_NET_BIND_TCP, 4, "net.bind_tcp", WARD_LANDLOCK_NEED_NET },
	{ RIGHT_NET, LANDLOCK_ACCESS_NET_CONNECT_TCP, 4, "net.connect_tcp", WARD_LANDLOCK_NEED_NET },
	{ RIGHT_FS, LANDLOCK_ACCESS_FS_IOCTL_DEV, 5, "fs.ioctl_dev", WARD_LANDLOCK_NEED_IOCTL_DEV },
	{ RIGHT_SCOPE, LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET, 6, "scope.abstract_unix_socket",
	  WARD_LANDLOCK_NEED_SCOPE },
	{ RIGHT_SCOPE, LANDLOCK_SCOPE_SIGNAL, 6, "scope.signal", WARD_LANDLOCK_NEED_SCOPE },
};

struct path_rule {
	char *path;
	uint64_t access;
	bool optional; /* skipped when the path does not exist */
};

struct port_rule {
	uint16_t port;
	uint64_t access;
};

struct ward_landlock_plan {
	int abi; /* 0: apply nothing */
	uint64_t handled_fs, handled_net, scoped;
	struct path_rule *rules;
	size_t n_rules;
	struct port_rule ports[2 * WARD_LANDLOCK_MAX_PORTS];
	size_t n_ports;
	struct ward_landlock_report report;
};

void ward_landlock_config_init(struct ward_landlock_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = WARD_LANDLOCK_REQUIRED;
	cfg->min_abi = 1;
	cfg->require = WARD_LANDLOCK_NEED_FS;
	cfg->read_root = "/";
	cfg->tmp = true;
	cfg->devices = true;
	cfg->scope_abstract_unix = true;
	cfg->scope_signal = true;
}

/* ---- ABI ------------------------------------------------------------------ */

static atomic_int cached_abi; /* 0 unknown, > 0 the ABI, < 0 -errno */

static int abi_error(struct ward_error **err, int e)
{
	if (e == ENOSYS)
		return ward_error_make(err, e, "landlock is not built into this kernel "
					       "(CONFIG_SECURITY_LANDLOCK)");
	if (e == EOPNOTSUPP)
		return ward_error_make(err, e, "landlock is built but disabled at boot "
					       "(add landlock to the lsm= kernel parameter)");
	return ward_error_make(err, e, "landlock_create_ruleset(VERSION)");
}

int ward_landlock_abi(struct ward_error **err)
{
	int abi = atomic_load(&cached_abi);

	if (abi == 0) {
		long r = syscall(__NR_landlock_create_ruleset, NULL, 0,
				 LANDLOCK_CREATE_RULESET_VERSION);

		abi = r >= 1 ? (int)r : -errno;
		atomic_store(&cached_abi, abi);
	}
	if (abi < 0)
		abi_error(err, -abi);
	return abi;
}

void ward_landlock_abi_reset(void)
{
	atomic_store(&cached_abi, 0);
}

static int clamp_abi(int abi)
{
	if (abi <= 0)
		return 0;
	return abi > WARD_LANDLOCK_ABI_KNOWN ? WARD_LANDLOCK_ABI_KNOWN : abi;
}

static uint64_t rights_of(enum right_kind kind, int abi)
{
	uint64_t mask = 0;

	abi = clamp_abi(abi);
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++)
		if (rights[i].kind == kind && rights[i].abi <= abi)
			mask |= rights[i].bit;
	return mask;
}

uint64_t ward_landlock_fs_rights(int abi)
{
	return rights_of(RIGHT_FS, abi);
}

uint64_t ward_landlock_net_rights(int abi)
{
	return rights_of(RIGHT_NET, abi);
}

uint64_t ward_landlock_scopes(int abi)
{
	return rights_of(RIGHT_SCOPE, abi);
}

static uint64_t mask_of(enum right_kind kind, uint64_t fs, uint64_t net, uint64_t scopes)
{
	return kind == RIGHT_FS ? fs : kind == RIGHT_NET ? net : scopes;
}

/* Append to buf; returns the length the whole text needs. */
static size_t append(char *buf, size_t size, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (len < size) {
		size_t room = size - len - 1;

		memcpy(buf + len, s, n < room ? n : room);
		buf[len + (n < room ? n : room)] = '\0';
	}
	return len + n;
}

size_t ward_landlock_rights_names(uint64_t fs, uint64_t net, uint64_t scopes, char *buf,
				  size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++) {
		if (!(mask_of(rights[i].kind, fs, net, scopes) & rights[i].bit))
			continue;
		if (len)
			len = append(buf, size, len, ",");
		len = append(buf, size, len, rights[i].name);
	}
	return len;
}

static size_t missing_names(uint64_t fs, uint64_t net, uint64_t scopes, char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++) {
		char one[64];

		if (!(mask_of(rights[i].kind, fs, net, scopes) & rights[i].bit))
			continue;
		snprintf(one, sizeof(one), "%s%s (abi %d)", len ? "," : "", rights[i].name,
			 rights[i].abi);
		len = append(buf, size, len, one);
	}
	return len;
}

/* ---- the plan (pure) -------------------------------------------------------- */

void ward_landlock_plan_free(struct ward_landlock_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_rules; i++)
		free(plan->rules[i].path);
	free(plan->rules);
	free(plan);
}

static int add_rule(struct ward_landlock_plan *p, size_t cap, const char *path, uint64_t access,
		    bool optional, struct ward_error **err)
{
	access &= p->handled_fs;
	if (!access)
		return 0;
	if (p->n_rules == cap)
		return ward_error_make(err, E2BIG, "landlock: too many path rules");
	p->rules[p->n_rules].path = strdup(path);
	if (!p->rules[p->n_rules].path)
		return ward_error_make(err, ENOMEM, "landlock: plan");
	p->rules[p->n_rules].access = access;
	p->rules[p->n_rules].optional = optional;
	p->n_rules++;
	return 0;
}

static int check_path(const char *what, const char *path, struct ward_error **err)
{
	if (!path || path[0] != '/')
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "landlock: %s '%s' is not an absolute path", what,
					    path ? path : "");
	return 0;
}

static int check_ports(const char *what, const uint16_t *ports, size_t n, struct ward_error **err)
{
	if (n > WARD_LANDLOCK_MAX_PORTS)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "landlock: %zu %s ports, at most %d", n, what,
					    WARD_LANDLOCK_MAX_PORTS);
	for (size_t i = 0; i < n; i++)
		if (ports[i] == 0)
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "landlock: %s port 0 is not a port", what);
	return 0;
}

/* The rights the configuration would use on the newest known ABI. */
static void wanted(const struct ward_landlock_config *cfg, uint64_t *fs, uint64_t *net,
		   uint64_t *scopes)
{
	*fs = ward_landlock_fs_rights(WARD_LANDLOCK_ABI_KNOWN);
	*net = (cfg->restrict_connect ? LANDLOCK_ACCESS_NET_CONNECT_TCP : 0) |
	       (cfg->restrict_bind ? LANDLOCK_ACCESS_NET_BIND_TCP : 0);
	*scopes = (cfg->scope_abstract_unix ? LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET : 0) |
		  (cfg->scope_signal ? LANDLOCK_SCOPE_SIGNAL : 0);
}

/* In required mode: the first right the configuration requires that the
 * ABI lacks, or NULL. min_abi requires every right up to it. */
static const struct right *first_missing(const struct ward_landlock_config *cfg, int abi)
{
	uint64_t fs, net, scopes;

	wanted(cfg, &fs, &net, &scopes);
	for (size_t i = 0; i < ARRAY_SIZE(rights); i++) {
		const struct right *r = &rights[i];
		bool req = r->abi <= cfg->min_abi || (cfg->require & r->need);

		/* Network and scope requirements only bind when the
		 * configuration uses them, or when min_abi asks for the ABI
		 * that brought them (the kernel must offer that ABI). */
		if (r->kind != RIGHT_FS && !(mask_of(r->kind, fs, net, scopes) & r->bit) &&
		    r->abi > cfg->min_abi)
			req = false;
		if (req && r->abi > abi)
			return r;
	}
	return NULL;
}

static int plan_paths(struct ward_landlock_plan *p, const struct ward_landlock_config *cfg,
		      size_t cap, struct ward_error **err)
{
	/* Optional: a sandbox's minimal /dev may lack some of them. */
	static const struct {
		const char *path;
		uint64_t access;
		bool tmp; /* with cfg->tmp, else with cfg->devices */
	} fixed[] = {
		{ "/tmp", FS_READ_WRITE, true },
		{ "/dev/shm", FS_READ_WRITE, true },
		{ "/dev/null", FS_DEV, false },
		{ "/dev/zero", FS_DEV, false },
		{ "/dev/full", FS_DEV, false },
		{ "/dev/random", FS_DEV, false },
		{ "/dev/urandom", FS_DEV, false },
		{ "/dev/tty", FS_TTY, false },
		{ "/dev/ptmx", FS_TTY, false },
		{ "/dev/pts", FS_TTY, false },
	};

	if (add_rule(p, cap, cfg->read_root ? cfg->read_root : "/", FS_READ, false, err) < 0)
		return -1;
	if (cfg->workdir && add_rule(p, cap, cfg->workdir, FS_READ_WRITE, false, err) < 0)
		return -1;
	for (size_t i = 0; cfg->rw_paths && cfg->rw_paths[i]; i++)
		if (add_rule(p, cap, cfg->rw_paths[i], FS_READ_WRITE, false, err) < 0)
			return -1;
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++) {
		if (!(fixed[i].tmp ? cfg->tmp : cfg->devices))
			continue;
		if (add_rule(p, cap, fixed[i].path, fixed[i].access, true, err) < 0)
			return -1;
	}
	return 0;
}

static void plan_ports(struct ward_landlock_plan *p, const struct ward_landlock_config *cfg)
{
	for (size_t i = 0; p->handled_net & LANDLOCK_ACCESS_NET_CONNECT_TCP &&
			   i < cfg->n_connect_ports; i++)
		p->ports[p->n_ports++] = (struct port_rule){ cfg->connect_ports[i],
							     LANDLOCK_ACCESS_NET_CONNECT_TCP };
	for (size_t i = 0; p->handled_net & LANDLOCK_ACCESS_NET_BIND_TCP &&
			   i < cfg->n_bind_ports; i++)
		p->ports[p->n_ports++] = (struct port_rule){ cfg->bind_ports[i],
							     LANDLOCK_ACCESS_NET_BIND_TCP };
}

static int validate(const struct ward_landlock_config *cfg, struct ward_error **err)
{
	if (cfg->mode != WARD_LANDLOCK_REQUIRED && cfg->mode != WARD_LANDLOCK_BEST_EFFORT &&
	    cfg->mode != WARD_LANDLOCK_OFF)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "landlock: unknown mode %d", (int)cfg->mode);
	if (cfg->min_abi < 0 || cfg->min_abi > WARD_LANDLOCK_ABI_KNOWN)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "landlock: minimum abi %d is not between 0 and %d",
					    cfg->min_abi, WARD_LANDLOCK_ABI_KNOWN);
	if (cfg->abi_max < 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "landlock: abi cap %d is negative", cfg->abi_max);
	if (cfg->abi_max > 0 && cfg->min_abi > cfg->abi_max && cfg->mode == WARD_LANDLOCK_REQUIRED)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "landlock: minimum abi %d is above the abi cap %d",
					    cfg->min_abi, cfg->abi_max);
	if (check_path("read root", cfg->read_root ? cfg->read_root : "/", err) < 0 ||
	    (cfg->workdir && check_path("workdir", cfg->workdir, err) < 0))
		return -1;
	for (size_t i = 0; cfg->rw_paths && cfg->rw_paths[i]; i++)
		if (check_path("writable path", cfg->rw_paths[i], err) < 0)
			return -1;
	if (check_ports("connect", cfg->connect_ports, cfg->n_connect_ports, err) < 0 ||
	    check_ports("bind", cfg->bind_ports, cfg->n_bind_ports, err) < 0)
		return -1;
	return 0;
}

int ward_landlock_plan_new(const struct ward_landlock_config *cfg, int kernel_abi,
			   struct ward_landlock_plan **out, struct ward_error **err)
{
	struct ward_landlock_plan *p;
	uint64_t want_fs, want_net, want_scopes;
	const struct right *missing;
	size_t cap = 16;
	int abi;

	*out = NULL;
	if (validate(cfg, err) < 0)
		return -1;
	p = calloc(1, sizeof(*p));
	if (!p)
		return ward_error_make(err, ENOMEM, "landlock: plan");
	p->report.kernel_abi = kernel_abi > 0 ? kernel_abi : 0;
	p->report.abi_max = cfg->abi_max;

	if (cfg->mode == WARD_LANDLOCK_OFF) {
		snprintf(p->report.status, sizeof(p->report.status), "off");
		*out = p;
		return 0;
	}
	if (kernel_abi <= 0) {
		int e = kernel_abi < 0 ? -kernel_abi : ENOSYS;

		if (cfg->mode == WARD_LANDLOCK_REQUIRED) {
			free(p);
			return abi_error(err, e);
		}
		snprintf(p->report.status, sizeof(p->report.status), "unavailable");
		snprintf(p->report.unavailable, sizeof(p->report.unavailable), "landlock (%s)",
			 e == EOPNOTSUPP ? "disabled at boot" : "not built into this kernel");
		*out = p;
		return 0;
	}

	abi = clamp_abi(kernel_abi);
	if (cfg->abi_max > 0 && abi > cfg->abi_max)
		abi = cfg->abi_max;
	missing = cfg->mode == WARD_LANDLOCK_REQUIRED ? first_missing(cfg, abi) : NULL;
	if (!missing && cfg->mode == WARD_LANDLOCK_REQUIRED && cfg->min_abi > abi) {
		/* an ABI that brought no right of its own (7: audit logging) */
		free(p);
		if (abi < kernel_abi)
			return ward_error_make(err, 0,
					       "landlock: minimum abi %d, capped at abi %d "
					       "(the kernel offers %d)",
					       cfg->min_abi, abi, kernel_abi);
		return ward_error_make(err, 0, "landlock: minimum abi %d, this kernel offers abi %d",
				       cfg->min_abi, kernel_abi);
	}
	if (missing) {
		free(p);
		if (abi < kernel_abi)
			return ward_error_make(err, 0,
					       "landlock right '%s' needs abi %d, capped at abi %d "
					       "(the kernel offers %d)",
					       missing->name, missing->abi, abi, kernel_abi);
		return ward_error_make(err, 0,
				       "landlock right '%s' needs abi %d, this kernel offers abi %d",
				       missing->name, missing->abi, kernel_abi);
	}

	wanted(cfg, &want_fs, &want_net, &want_scopes);
	p->abi = abi;
	p->handled_fs = want_fs & ward_landlock_fs_rights(abi);
	p->handled_net = want_net & ward_landlock_net_rights(abi);
	p->scoped = want_scopes & ward_landlock_scopes(abi);

	for (size_t i = 0; cfg->rw_paths && cfg->rw_paths[i]; i++)
		cap++;
	p->rules = calloc(cap, sizeof(*p->rules));
	if (!p->rules) {
		ward_landlock_plan_free(p);
		return ward_error_make(err, ENOMEM, "landlock: plan");
	}
	if (plan_paths(p, cfg, cap, err) < 0) {
		ward_landlock_plan_free(p);
		return -1;
	}
	plan_ports(p, cfg);

	snprintf(p->report.status, sizeof(p->report.status), "enforced");
	p->report.abi = abi;
	ward_landlock_rights_names(p->handled_fs, p->handled_net, p->scoped, p->report.enforced,
				   sizeof(p->report.enforced));
	missing_names(want_fs & ~p->handled_fs, want_net & ~p->handled_net,
		      want_scopes & ~p->scoped, p->report.unavailable,
		      sizeof(p->report.unavailable));
	*out = p;
	return 0;
}

const struct ward_landlock_report *ward_landlock_plan_report(const struct ward_landlock_plan *plan)
{
	return &plan->report;
}

void ward_landlock_plan_masks(const struct ward_landlock_plan *plan, uint64_t *fs, uint64_t *net,
			      uint64_t *scopes)
{
	if (fs)
		*fs = plan->handled_fs;
	if (net)
		*net = plan->handled_net;
	if (scopes)
		*scopes = plan->scoped;
}

int ward_landlock_plan_rule(const struct ward_landlock_plan *plan, size_t n, const char **path,
			    uint64_t *access)
{
	if (n >= plan->n_rules)
		return -1;
	if (path)
		*path = plan->rules[n].path;
	if (access)
		*access = plan->rules[n].access;
	return 0;
}

/* ---- text forms ------------------------------------------------------------------ */

static const char *const mode_names[] = {
	[WARD_LANDLOCK_REQUIRED] = "required",
	[WARD_LANDLOCK_BEST_EFFORT] = "best-effort",
	[WARD_LANDLOCK_OFF] = "off",
};

static const struct {
	const char *name;
	unsigned need;
} need_names[] = {
	{ "fs", WARD_LANDLOCK_NEED_FS },
	{ "refer", WARD_LANDLOCK_NEED_REFER },
	{ "truncate", WARD_LANDLOCK_NEED_TRUNCATE },
	{ "net", WARD_LANDLOCK_NEED_NET },
	{ "ioctl_dev", WARD_LANDLOCK_NEED_IOCTL_DEV },
	{ "scope", WARD_LANDLOCK_NEED_SCOPE },
};

const char *ward_landlock_mode_name(enum ward_landlock_mode mode)
{
	if ((unsigned)mode < ARRAY_SIZE(mode_names))
		return mode_names[mode];
	return "?";
}

int ward_landlock_parse_mode(const char *s, enum ward_landlock_mode *mode,
			     struct ward_error **err)
{
	for (size_t i = 0; i < ARRAY_SIZE(mode_names); i++)
		if (s && strcmp(s, mode_names[i]) == 0) {
			*mode = (enum ward_landlock_mode)i;
			return 0;
		}
	return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
				    "unknown landlock mode '%s' (required, best-effort, off)",
				    s ? s : "");
}

int ward_landlock_parse_abi(const char *what, const char *s, int *abi, struct ward_error **err)
{
	char *end;
	long v;

	errno = 0;
	v = s && *s ? strtol(s, &end, 10) : -1;
	if (!s || !*s || errno || *end || v < 0 || v > WARD_LANDLOCK_ABI_KNOWN)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "%s '%s' is not a landlock abi between 0 and %d", what,
					    s ? s : "", WARD_LANDLOCK_ABI_KNOWN);
	*abi = (int)v;
	return 0;
}

int ward_landlock_parse_need(const char *s, unsigned *need, struct ward_error **err)
{
	for (size_t i = 0; i < ARRAY_SIZE(need_names); i++)
		if (s && strcmp(s, need_names[i].name) == 0) {
			*need |= need_names[i].need;
			return 0;
		}
	return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
				    "unknown landlock requirement '%s' (fs, refer, truncate, net, "
				    "ioctl_dev, scope)",
				    s ? s : "");
}

/* ---- apply (in the sandbox: system calls only) ------------------------------ */

static int add_path_rule(int ruleset, const struct path_rule *r, struct ward_error **err)
{
	struct ward_landlock_path_beneath_attr attr = { .allowed_access = r->access };
	/* Only the rights a file can have apply to one that is not a
	 * directory. Told without an fstat each (~3 us in a VM, a dozen rules
	 * a command): rights that all apply to files need no telling (the
	 * device nodes'), and a directory opens with O_DIRECTORY. */
	bool file_rights_only = !(r->access & ~FS_FILE_RIGHTS);
	_cleanup_close_ int fd = open(r->path, O_PATH | O_CLOEXEC |
						       (file_rights_only ? 0 : O_DIRECTORY));

	if (fd < 0 && errno == ENOTDIR && !file_rights_only) {
		fd = open(r->path, O_PATH | O_CLOEXEC);
		attr.allowed_access &= FS_FILE_RIGHTS;
	}
	if (fd < 0) {
		if (r->optional && errno == ENOENT)
			return 0;
		return ward_error_make(err, errno, "landlock: open '%s'", r->path);
	}
	if (!attr.allowed_access)
		return 0;
	attr.parent_fd = fd;
	if (syscall(__NR_landlock_add_rule, ruleset, WARD_LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0)
		return ward_error_make(err, errno, "landlock: add rule for '%s'", r->path);
	return 0;
}

int ward_landlock_apply(const struct ward_landlock_plan *plan, struct ward_error **err)
{
	struct ward_landlock_ruleset_attr attr = {
		.handled_access_fs = plan->handled_fs,
		.handled_access_net = plan->handled_net,
		.scoped = plan->scoped,
	};
	_cleanup_close_ int ruleset = -1;

	if (plan->abi <= 0)
		return 0;
	ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (ruleset < 0) {
		if (errno == ENOSYS || errno == EOPNOTSUPP)
			return abi_error(err, errno);
		return ward_error_make(err, errno, "landlock: create ruleset (abi %d)", plan->abi);
	}
	for (size_t i = 0; i < plan->n_rules; i++)
		if (add_path_rule(ruleset, &plan->rules[i], err) < 0)
			return -1;
	for (size_t i = 0; i < plan->n_ports; i++) {
		struct ward_landlock_net_port_attr pa = { .allowed_access = plan->ports[i].access,
							  .port = plan->ports[i].port };

		if (syscall(__NR_landlock_add_rule, ruleset, WARD_LANDLOCK_RULE_NET_PORT, &pa, 0) < 0)
			return ward_error_make(err, errno, "landlock: add rule for tcp port %u",
					       (unsigned)plan->ports[i].port);
	}
	if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0) {
		if (errno == EPERM)
			return ward_error_make(err, errno,
					       "landlock: restrict self (no_new_privs is not set)");
		return ward_error_make(err, errno, "landlock: restrict self");
	}
	return 0;
}
