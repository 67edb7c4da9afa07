/* session-policy.c — the policy file's "session" object:
 *
 *     "session": {"isolation": "fresh" | "shared", "timeout": 30, "env": "host" | "empty",
 *                 "ssh": {"host": "build1", "user": "ci", "port": 22,
 *                         "identity": "/etc/ward/id_ed25519",
 *                         "known_hosts": "/etc/ward/known_hosts",
 *                         "ward": "/usr/local/bin/ward", "workdir": "/srv/work"}}
 *
 * Every key checked, as in the rest of the policy. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/session-internal.h"

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
		if (!known)
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "policy '%s': %s: unknown key \"%s\"", origin,
						    where, k);
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

int ward_session_policy_apply(json_t *v, const char *origin, struct ward_config *cfg,
			      struct ward_error **err)
{
	static const char *const keys[] = { "isolation", "timeout", "env", "ssh", NULL };
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
	return 0;
}
