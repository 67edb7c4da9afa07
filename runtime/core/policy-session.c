/* policy-session.c — the policy file's "session" object:
 *
 *     "session": {"isolation": "fresh" | "shared", "timeout": 30, "env": "host" | "empty",
 *                 "ssh": {"host": "build1", "user": "ci", "port": 22,
 *                         "identity": "/etc/ward/id_ed25519",
 *                         "known_hosts": "/etc/ward/known_hosts",
 *                         "ward": "/usr/local/bin/ward", "workdir": "/srv/work"},
 *                 "limits": {"command_bytes": 131072, "alias_depth": 32, "aliases": 256,
 *                            "alias_bytes": 262144, "env_bytes": 524288,
 *                            "history_entries": 1000, "history_bytes": 1048576,
 *                            "sessions": 16, "sandboxes": 16, "response_bytes": 4194304,
 *                            "approval_timeout": 300}}
 *
 * Every key checked, as in the rest of the policy. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/session.h"

/* The options' defaults, and their release: the policy makes them, and a
 * config (core/config.c) frees the ones its policy made. */
void ward_session_limits_init(struct ward_session_limits *l)
{
	l->command_bytes = WARD_COMMAND_BYTES_DEFAULT;
	l->alias_depth = WARD_ALIAS_DEPTH_MAX;
	l->aliases = WARD_ALIASES_MAX;
	l->alias_bytes = WARD_ALIAS_BYTES_DEFAULT;
	l->env_bytes = WARD_ENV_BYTES_DEFAULT;
	l->history_entries = WARD_HISTORY_MAX;
	l->history_bytes = WARD_HISTORY_BYTES_DEFAULT;
	l->sessions = WARD_SERVE_SESSIONS_DEFAULT;
	l->sandboxes = WARD_SERVE_SANDBOXES_DEFAULT;
	l->response_bytes = WARD_SERVE_RESPONSE_BYTES_DEFAULT;
	l->approval_timeout = WARD_SERVE_APPROVAL_TIMEOUT_DEFAULT;
}

void ward_session_options_init(struct ward_session_options *o)
{
	memset(o, 0, sizeof(*o));
	o->isolation = WARD_SESSION_FRESH;
	o->timeout = WARD_SESSION_TIMEOUT_DEFAULT;
	ward_session_limits_init(&o->limits);
}

void ward_session_options_release(struct ward_session_options *o)
{
	free(o->ssh.host);
	free(o->ssh.user);
	free(o->ssh.identity);
	free(o->ssh.known_hosts);
	free(o->ssh.ward);
	free(o->ssh.workdir);
	free(o->ssh.ssh);
	ward_session_options_init(o);
}

void ward_policy_session_free(struct ward_session_options *o)
{
	if (!o)
		return;
	ward_session_options_release(o);
	free(o);
}

static int bad(const char *origin, const char *key, const char *what, struct ward_error **err)
{
	return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "policy '%s': %s: %s",
				    origin, key, what);
}

/* The object at path against its shape (runtime/jschema-internal.h): types,
 * required and unknown keys, in the rest of the policy's wording. */
static int shape(json_t *v, const char *origin, const char *path, struct ward_error **err,
		 const char *fmt, ...)
{
	char prefix[WARD_ERROR_MESSAGE_MAX / 2];
	va_list ap;
	int rc;

	snprintf(prefix, sizeof(prefix), "policy '%s'", origin);
	va_start(ap, fmt);
	rc = ward_jschema_vunpack(v, prefix, path, err, fmt, ap);
	va_end(ap);
	return rc;
}

static int take_string(json_t *obj, const char *key, const char *path, const char *origin,
		       char **out, struct ward_error **err)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return bad(origin, path, "must be a non-empty string", err);
	free(*out);
	*out = strdup(json_string_value(v));
	return *out ? 0 : ward_error_make(err, ENOMEM, "policy");
}

static int apply_ssh(json_t *v, const char *origin, struct ward_session_ssh *ssh,
		     struct ward_error **err)
{
	const char *str;
	json_int_t port;

	if (shape(v, origin, "session.ssh", err, "{s?s, s?s, s?I, s?s, s?s, s?s, s?s, s?s}", "host",
		  &str, "user", &str, "port", &port, "identity", &str, "known_hosts", &str, "ward",
		  &str, "workdir", &str, "ssh", &str) < 0 ||
	    take_string(v, "host", "session.ssh.host", origin, &ssh->host, err) < 0 ||
	    take_string(v, "user", "session.ssh.user", origin, &ssh->user, err) < 0 ||
	    take_string(v, "identity", "session.ssh.identity", origin, &ssh->identity, err) < 0 ||
	    take_string(v, "known_hosts", "session.ssh.known_hosts", origin, &ssh->known_hosts,
			err) < 0 ||
	    take_string(v, "ward", "session.ssh.ward", origin, &ssh->ward, err) < 0 ||
	    take_string(v, "workdir", "session.ssh.workdir", origin, &ssh->workdir, err) < 0 ||
	    take_string(v, "ssh", "session.ssh.ssh", origin, &ssh->ssh, err) < 0)
		return -1;
	if (json_object_get(v, "port")) {
		if (port < 1 || port > 65535)
			return bad(origin, "session.ssh.port", "must be an integer from 1 to 65535",
				   err);
		ssh->port = (int)port;
	}
	if (!ssh->host)
		return bad(origin, "session.ssh.host", "is required", err);
	if (!ssh->known_hosts)
		return bad(origin, "session.ssh.known_hosts",
			   "is required: host keys are always verified", err);
	if (!ssh->workdir || ssh->workdir[0] != '/')
		return bad(origin, "session.ssh.workdir", "is required, an absolute path", err);
	return 0;
}

/* One bound: an integer from lo to hi. */
static int take_size(json_t *obj, const char *key, long long lo, long long hi, const char *origin,
		     size_t *out, struct ward_error **err)
{
	json_t *v = json_object_get(obj, key);
	char path[64], what[96];

	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
		snprintf(path, sizeof(path), "session.limits.%s", key);
		snprintf(what, sizeof(what), "must be an integer from %lld to %lld", lo, hi);
		return bad(origin, path, what, err);
	}
	*out = (size_t)json_integer_value(v);
	return 0;
}

#define KIB 1024LL
#define MIB (1024LL * 1024)

static int apply_limits(json_t *v, const char *origin, struct ward_session_limits *l,
			struct ward_error **err)
{
	size_t depth = (size_t)l->alias_depth, approval = (size_t)l->approval_timeout;
	json_int_t n;

	if (shape(v, origin, "session.limits", err,
		  "{s?I, s?I, s?I, s?I, s?I, s?I, s?I, s?I, s?I, s?I, s?I}", "command_bytes", &n,
		  "alias_depth", &n, "aliases", &n, "alias_bytes", &n, "env_bytes", &n,
		  "history_entries", &n, "history_bytes", &n, "sessions", &n, "sandboxes", &n,
		  "response_bytes", &n, "approval_timeout", &n) < 0 ||
	    take_size(v, "command_bytes", 1, MIB, origin, &l->command_bytes, err) < 0 ||
	    take_size(v, "alias_depth", 1, 1000, origin, &depth, err) < 0 ||
	    take_size(v, "aliases", 0, 100000, origin, &l->aliases, err) < 0 ||
	    take_size(v, "alias_bytes", 0, 64 * MIB, origin, &l->alias_bytes, err) < 0 ||
	    take_size(v, "env_bytes", 4 * KIB, 64 * MIB, origin, &l->env_bytes, err) < 0 ||
	    take_size(v, "history_entries", 0, 1000000, origin, &l->history_entries, err) < 0 ||
	    take_size(v, "history_bytes", 0, 1024 * MIB, origin, &l->history_bytes, err) < 0 ||
	    take_size(v, "sessions", 1, 10000, origin, &l->sessions, err) < 0 ||
	    take_size(v, "sandboxes", 1, 10000, origin, &l->sandboxes, err) < 0 ||
	    take_size(v, "response_bytes", 256 * KIB, 1024 * MIB, origin, &l->response_bytes,
		      err) < 0 ||
	    take_size(v, "approval_timeout", 1, 86400, origin, &approval, err) < 0)
		return -1;
	l->alias_depth = (int)depth;
	l->approval_timeout = (int)approval;
	return 0;
}

int ward_session_policy_apply(json_t *v, const char *origin, struct ward_config *cfg,
			      struct ward_error **err)
{
	struct ward_session_options *o = cfg->session;
	const char *str;
	json_int_t n;
	json_t *x;

	if (shape(v, origin, "session", err, "{s?s, s?I, s?s, s?{*}, s?{*}}", "isolation", &str,
		  "timeout", &n, "env", &str, "ssh", "limits") < 0)
		return -1;
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			return ward_error_make(err, ENOMEM, "policy");
		ward_session_options_init(o);
		cfg->session = o;
	}
	if ((x = json_object_get(v, "isolation"))) {
		const char *s = json_is_string(x) ? json_string_value(x) : "";

		if (strcmp(s, "fresh") == 0)
			o->isolation = WARD_SESSION_FRESH;
		else if (strcmp(s, "shared") == 0)
			o->isolation = WARD_SESSION_SHARED;
		else
			return bad(origin, "session.isolation", "must be \"fresh\" or \"shared\"",
				   err);
	}
	if ((x = json_object_get(v, "timeout"))) {
		if (!json_is_integer(x) || json_integer_value(x) < 1 ||
		    json_integer_value(x) > WARD_TIMEOUT_MAX)
			return bad(origin, "session.timeout",
				   "must be a whole number of seconds, at least 1", err);
		o->timeout = (int)json_integer_value(x);
	}
	if ((x = json_object_get(v, "env"))) {
		const char *s = json_is_string(x) ? json_string_value(x) : "";

		if (strcmp(s, "host") == 0)
			o->empty_env = false;
		else if (strcmp(s, "empty") == 0)
			o->empty_env = true;
		else
			return bad(origin, "session.env", "must be \"host\" or \"empty\"", err);
	}
	if ((x = json_object_get(v, "ssh")) && apply_ssh(x, origin, &o->ssh, err) < 0)
		return -1;
	if ((x = json_object_get(v, "limits")) && apply_limits(x, origin, &o->limits, err) < 0)
		return -1;
	return 0;
}
