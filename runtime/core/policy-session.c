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

static int unknown_keys(json_t *obj, const char *const *keys, const char *origin,
			const char *where, struct ward_error **err)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v) {
		const char *const *p;
		bool known = false;

		(void)v;
		for (p = keys; *p; p++)
			known = known || strcmp(*p, k) == 0;
		if (!known) {
			char valid[512];

			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "policy '%s': %s: unknown key \"%s\" (valid: %s)",
						    origin, where, k,
						    ward_names_join(keys, valid, sizeof(valid)));
		}
	}
	return 0;
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
	static const char *const keys[] = { "host", "user", "port", "identity", "known_hosts",
					    "ward", "workdir", "ssh", NULL };
	json_t *port;

	if (!json_is_object(v))
		return bad(origin, "session.ssh", "must be an object", err);
	if (unknown_keys(v, keys, origin, "session.ssh", err) < 0 ||
	    take_string(v, "host", "session.ssh.host", origin, &ssh->host, err) < 0 ||
	    take_string(v, "user", "session.ssh.user", origin, &ssh->user, err) < 0 ||
	    take_string(v, "identity", "session.ssh.identity", origin, &ssh->identity, err) < 0 ||
	    take_string(v, "known_hosts", "session.ssh.known_hosts", origin, &ssh->known_hosts,
			err) < 0 ||
	    take_string(v, "ward", "session.ssh.ward", origin, &ssh->ward, err) < 0 ||
	    take_string(v, "workdir", "session.ssh.workdir", origin, &ssh->workdir, err) < 0 ||
	    take_string(v, "ssh", "session.ssh.ssh", origin, &ssh->ssh, err) < 0)
		return -1;
	if ((port = json_object_get(v, "port"))) {
		if (!json_is_integer(port) || json_integer_value(port) < 1 ||
		    json_integer_value(port) > 65535)
			return bad(origin, "session.ssh.port", "must be an integer from 1 to 65535",
				   err);
		ssh->port = (int)json_integer_value(port);
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
	static const char *const keys[] = { "command_bytes", "alias_depth", "aliases",
					    "alias_bytes", "env_bytes", "history_entries",
					    "history_bytes", "sessions", "sandboxes",
					    "response_bytes", "approval_timeout", NULL };
	size_t depth = (size_t)l->alias_depth, approval = (size_t)l->approval_timeout;

	if (!json_is_object(v))
		return bad(origin, "session.limits", "must be an object", err);
	if (unknown_keys(v, keys, origin, "session.limits", err) < 0 ||
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
	static const char *const keys[] = { "isolation", "timeout", "env", "ssh", "limits", NULL };
	struct ward_session_options *o = cfg->session;
	json_t *x;

	if (!json_is_object(v))
		return bad(origin, "session", "must be an object", err);
	if (unknown_keys(v, keys, origin, "session", err) < 0)
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
