/* config.c — struct ward_config: defaults, validation of each setting. */
#include "ward/sandbox.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/ratelimit.h"
#include "ward/validate.h"

void ward_config_init(struct ward_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mode = WARD_SANDBOX_REQUIRED;
	cfg->namespaces = WARD_NS_ALL;
	cfg->view = true;
	cfg->timeout = 120;
	cfg->landlock = WARD_LANDLOCK_REQUIRED;
	cfg->landlock_min_abi = 1;
	cfg->stdin_fd = cfg->stdout_fd = cfg->stderr_fd = -1;
	ward_netpolicy_init(&cfg->netpolicy);
	cfg->proxy_port = WARD_NET_DEFAULT_PORT;
	ward_cidr_parse(WARD_NET_DEFAULT_SUBNET, &cfg->net_subnet, NULL);
	cfg->pass_fd = -1;
	cfg->cancel_fd = -1;
	cfg->rate_per_minute = WARD_RATE_PER_MINUTE_DEFAULT;
	cfg->rate_per_hour = WARD_RATE_PER_HOUR_DEFAULT;
	ward_limits_init(&cfg->limits);
	cfg->cgroup = true;
}

void ward_config_release(struct ward_config *cfg)
{
	size_t i;

	free(cfg->hostname);
	free(cfg->workdir);
	free(cfg->seccomp);
	ward_protect_free(cfg->protect);
	free(cfg->state_dir);
	free(cfg->continue_changes);
	for (i = 0; i < cfg->n_setenv; i++)
		free(cfg->setenv[i]);
	free(cfg->setenv);
	for (i = 0; i < cfg->n_mounts; i++) {
		free(cfg->mounts[i].source);
		free(cfg->mounts[i].target);
	}
	free(cfg->mounts);
	ward_netpolicy_release(&cfg->netpolicy);
	free(cfg->net_log);
	ward_policy_session_free(cfg->session);
	ward_rules_free(cfg->rules);
	ward_admit_release(&cfg->admit);
	ward_config_init(cfg);
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int ward_config_set_workdir(struct ward_config *cfg, const char *path, struct ward_error **err)
{
	char resolved[PATH_MAX];
	struct stat st;

	if (!path || !*path)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "workdir is empty");
	if (!realpath(path, resolved))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
					    "workdir '%s'", path);
	if (stat(resolved, &st) < 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
					    "workdir '%s'", path);
	if (!S_ISDIR(st.st_mode))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, ENOTDIR,
					    "workdir '%s'", path);
	/* Never, not even with the person's --allow-workdir-anywhere; refused
	 * like the admission's rules (ward/admit.h): NotAuthorized, a rule. */
	if (strcmp(resolved, "/") == 0) {
		ward_error_make_kind(err, WARD_ERR_NOT_AUTHORIZED, 0,
				     "workdir '/' would make the whole filesystem writable "
				     "(rule workdir-system)");
		goto system;
	}
	if (under(resolved, "/proc") || under(resolved, "/sys") || under(resolved, "/dev")) {
		ward_error_make_kind(err, WARD_ERR_NOT_AUTHORIZED, 0,
				     "workdir '%s' is inside /proc, /sys or /dev (rule workdir-system)",
				     resolved);
		goto system;
	}
	free(cfg->workdir);
	cfg->workdir = strdup(resolved);
	if (!cfg->workdir)
		return ward_error_make(err, ENOMEM, "workdir");
	return 0;
system:
	if (err && *err)
		ward_error_set_rule(*err, "workdir-system");
	return -1;
}

int ward_config_set_hostname(struct ward_config *cfg, const char *name, struct ward_error **err)
{
	size_t n = strlen(name);
	char *copy;

	if (n == 0 || n > 64 || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789-_.") != n)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "hostname '%s' is not valid (1 to 64 letters, digits, "
					    "'-', '_' or '.')", name);
	if (!(copy = strdup(name)))
		return ward_error_make(err, ENOMEM, "hostname");
	free(cfg->hostname);
	cfg->hostname = copy;
	return 0;
}

int ward_config_set_timeout(struct ward_config *cfg, long long seconds, struct ward_error **err)
{
	if (seconds < 1)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "timeout must be at least 1 second, got %lld", seconds);
	if (seconds > WARD_TIMEOUT_MAX)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "timeout must be at most %d seconds, got %lld",
					    WARD_TIMEOUT_MAX, seconds);
	cfg->timeout = (int)seconds;
	return 0;
}

int ward_config_add_setenv(struct ward_config *cfg, const char *kv, struct ward_error **err)
{
	const char *eq = kv ? strchr(kv, '=') : NULL;
	const char *p;
	char **grown;

	if (!eq || eq == kv)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "setenv '%s' is not NAME=VALUE", kv ? kv : "");
	if (!(isalpha((unsigned char)kv[0]) || kv[0] == '_'))
		goto bad_name;
	for (p = kv; p < eq; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			goto bad_name;
	grown = realloc(cfg->setenv, (cfg->n_setenv + 1) * sizeof(*grown));
	if (!grown)
		return ward_error_make(err, ENOMEM, "setenv");
	cfg->setenv = grown;
	cfg->setenv[cfg->n_setenv] = strdup(kv);
	if (!cfg->setenv[cfg->n_setenv])
		return ward_error_make(err, ENOMEM, "setenv");
	cfg->n_setenv++;
	return 0;
bad_name:
	return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
				    "setenv '%.*s': not a valid variable name", (int)(eq - kv), kv);
}

int ward_config_add_mount(struct ward_config *cfg, enum ward_mount_kind kind, const char *source,
			  const char *target, struct ward_error **err)
{
	char resolved[PATH_MAX];
	struct ward_mount *grown, *m;
	const char *what = kind == WARD_MOUNT_TMPFS ? "tmpfs" :
			   kind == WARD_MOUNT_BIND  ? "bind" :
						      "ro-bind";

	if (!target || target[0] != '/')
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "%s target '%s' is not an absolute path", what,
					    target ? target : "");
	if (strcmp(target, "/") == 0 || under(target, "/proc") || under(target, "/dev") ||
	    strstr(target, "/../") || strstr(target, "/./") ||
	    (strlen(target) >= 3 && strcmp(target + strlen(target) - 3, "/..") == 0))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "%s target '%s' is not allowed", what, target);
	if (kind != WARD_MOUNT_TMPFS) {
		if (!source || !realpath(source, resolved))
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
						    "%s source '%s'", what, source ? source : "");
	}
	grown = realloc(cfg->mounts, (cfg->n_mounts + 1) * sizeof(*grown));
	if (!grown)
		return ward_error_make(err, ENOMEM, "mount");
	cfg->mounts = grown;
	m = &cfg->mounts[cfg->n_mounts];
	m->kind = kind;
	m->source = kind == WARD_MOUNT_TMPFS ? NULL : strdup(resolved);
	m->target = strdup(target);
	if ((kind != WARD_MOUNT_TMPFS && !m->source) || !m->target) {
		free(m->source);
		free(m->target);
		return ward_error_make(err, ENOMEM, "mount");
	}
	cfg->n_mounts++;
	return 0;
}

static int net_invalid(struct ward_error **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int net_invalid(struct ward_error **err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(err, WARD_ERR_INVALID_PARAMETERS, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int ward_config_set_net(struct ward_config *cfg, const char *mode, struct ward_error **err)
{
	if (mode && strcmp(mode, "none") == 0)
		cfg->net = WARD_NET_NONE;
	else if (mode && strcmp(mode, "proxy") == 0)
		cfg->net = WARD_NET_PROXY;
	else if (mode && strcmp(mode, "host") == 0)
		cfg->net = WARD_NET_HOST;
	else
		return net_invalid(err, "unknown network mode '%s' (known: none, proxy, host)",
				   mode ? mode : "");
	return 0;
}

int ward_config_set_net_transport(struct ward_config *cfg, const char *name,
				  struct ward_error **err)
{
	if (name && strcmp(name, "auto") == 0)
		cfg->net_transport = WARD_NET_TRANSPORT_AUTO;
	else if (name && strcmp(name, "veth") == 0)
		cfg->net_transport = WARD_NET_TRANSPORT_VETH;
	else if (name && strcmp(name, "loopback") == 0)
		cfg->net_transport = WARD_NET_TRANSPORT_LOOPBACK;
	else
		return net_invalid(err, "unknown network transport '%s' (known: auto, veth, "
					"loopback)", name ? name : "");
	return 0;
}

static int parse_port(const char *what, const char *s, uint16_t *out, struct ward_error **err)
{
	char *end;
	long v;

	errno = 0;
	v = s && *s ? strtol(s, &end, 10) : -1;
	if (!s || !*s || *end || errno || v < 1 || v > 65535)
		return net_invalid(err, "%s '%s' must be a port from 1 to 65535", what, s ? s : "");
	*out = (uint16_t)v;
	return 0;
}

int ward_config_set_proxy_port(struct ward_config *cfg, const char *port, struct ward_error **err)
{
	return parse_port("proxy port", port, &cfg->proxy_port, err);
}

int ward_config_set_net_subnet(struct ward_config *cfg, const char *cidr, struct ward_error **err)
{
	struct ward_cidr c;

	if (ward_cidr_parse(cidr, &c, err) < 0)
		return -1;
	if (c.family != AF_INET || c.prefix < 8 || c.prefix > 30)
		return net_invalid(err, "network subnet '%s' must be IPv4 with a prefix of 8 to 30",
				   cidr);
	cfg->net_subnet = c;
	return 0;
}

int ward_config_add_local_port(struct ward_config *cfg, const char *port, struct ward_error **err)
{
	uint16_t p = 0;

	if (parse_port("local port", port, &p, err) < 0)
		return -1;
	if (cfg->n_local_ports == ARRAY_SIZE(cfg->local_ports))
		return net_invalid(err, "more than %zu local ports", ARRAY_SIZE(cfg->local_ports));
	cfg->local_ports[cfg->n_local_ports++] = p;
	return 0;
}

struct ward_protect *ward_config_protect(struct ward_config *cfg, struct ward_error **err)
{
	if (!cfg->protect)
		cfg->protect = ward_protect_new(true, err);
	return cfg->protect;
}
