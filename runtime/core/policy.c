/* policy.c — the JSON policy file onto struct ward_config. */
#include "ward/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/core/core-internal.h"
#include "runtime/util/util-internal.h"
#include "ward/ratelimit.h"
#include "ward/validate.h"

struct ctx {
	const char *origin;
	char prefix[WARD_ERROR_MESSAGE_MAX / 2]; /* "policy 'ORIGIN'" */
	struct ward_error **err;
};

/* "policy 'ORIGIN': KEY: what": the wording of the shape's errors
 * (runtime/jschema-internal.h), for what a format cannot say. */
#define bad(c, key, ...) ward_jschema_fail((c)->prefix, (key), (c)->err, __VA_ARGS__)

/* The object at key against its shape: types, required and unknown keys
 * (those with the valid ones: a typo is fixed without the manual). */
#define shape(c, v, key, ...) ward_jschema_unpack((v), (c)->prefix, (key), (c)->err, __VA_ARGS__)

/* A string a format has let through, not empty. */
static int nonempty(struct ctx *c, const char *key, const char *s)
{
	if (s && !*s)
		return bad(c, key, "must be a non-empty string");
	return 0;
}

/* An error from a config setter, with the policy's context in front. */
static int setter_failed(struct ctx *c, const char *key)
{
	if (c->err && *c->err)
		ward_error_prefix(*c->err, "policy '%s': %s", c->origin, key);
	return -1;
}

static int apply_namespaces(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	static const char *const names[] = { "user", "mount", "pid", "net", "ipc", "uts", "cgroup" };
	unsigned ns = 0;
	size_t i, k;
	json_t *e;

	json_array_foreach(v, i, e) {
		bool found = false;

		if (!json_is_string(e))
			return bad(c, "namespaces", "element %zu must be a string, got %s", i,
				   ward_json_type_name(e));
		for (k = 0; k < ARRAY_SIZE(names); k++)
			if (strcmp(json_string_value(e), names[k]) == 0) {
				ns |= 1u << k;
				found = true;
			}
		if (!found)
			return bad(c, "namespaces", "unknown namespace \"%s\"", json_string_value(e));
	}
	cfg->namespaces = ns;
	if (!(ns & WARD_NS_MOUNT))
		cfg->view = false;
	return 0;
}

static int apply_env(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	json_t *set, *val;
	const char *k;
	int clear = -1;

	if (shape(c, v, "env", "{s?b, s?{*}}", "clear", &clear, "set") < 0)
		return -1;
	if (clear >= 0)
		cfg->clearenv = clear;
	set = json_object_get(v, "set");
	json_object_foreach(set, k, val) {
		char *kv, where[96];
		int rc;

		snprintf(where, sizeof(where), "env.set.%.80s", k);
		if (!json_is_string(val))
			return bad(c, where, "must be a string, got %s", ward_json_type_name(val));
		if (asprintf(&kv, "%s=%s", k, json_string_value(val)) < 0)
			return ward_error_make(c->err, ENOMEM, "policy");
		rc = ward_config_add_setenv(cfg, kv, c->err);
		free(kv);
		if (rc < 0)
			return setter_failed(c, "env.set");
	}
	return 0;
}

static int apply_mounts(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	char where[64], field[80];
	size_t i;
	json_t *m;

	json_array_foreach(v, i, m) {
		const char *type = NULL, *source = NULL, *target = NULL;
		enum ward_mount_kind kind;

		snprintf(where, sizeof(where), "mounts[%zu]", i);
		if (shape(c, m, where, "{s:s, s?s, s:s}", "type", &type, "source", &source, "target",
			  &target) < 0)
			return -1;
		snprintf(field, sizeof(field), "%s.type", where);
		if (nonempty(c, field, type) < 0)
			return -1;
		if (strcmp(type, "ro-bind") == 0)
			kind = WARD_MOUNT_RO_BIND;
		else if (strcmp(type, "bind") == 0)
			kind = WARD_MOUNT_BIND;
		else if (strcmp(type, "tmpfs") == 0)
			kind = WARD_MOUNT_TMPFS;
		else
			return bad(c, where, "unknown type \"%s\" (known: ro-bind, bind, tmpfs)", type);
		snprintf(field, sizeof(field), "%s.target", where);
		if (nonempty(c, field, target) < 0)
			return -1;
		snprintf(field, sizeof(field), "%s.source", where);
		if (kind != WARD_MOUNT_TMPFS && !source)
			return bad(c, field, "is missing");
		if (nonempty(c, field, source) < 0)
			return -1;
		if (kind == WARD_MOUNT_TMPFS && source)
			return bad(c, where, "a tmpfs has no source");
		if (ward_config_add_mount(cfg, kind, source, target, c->err) < 0)
			return setter_failed(c, where);
	}
	return 0;
}

static int apply_landlock(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	const char *mode = NULL;
	json_int_t min_abi, abi_max;
	char num[32];

	if (shape(c, v, "landlock", "{s?s, s?I, s?I}", "mode", &mode, "min_abi", &min_abi,
		  "abi_max", &abi_max) < 0 ||
	    nonempty(c, "landlock.mode", mode) < 0)
		return -1;
	if (mode && ward_landlock_parse_mode(mode, &cfg->landlock, c->err) < 0)
		return setter_failed(c, "landlock.mode");
	if (json_object_get(v, "min_abi")) {
		snprintf(num, sizeof(num), "%lld", (long long)min_abi);
		if (ward_landlock_parse_abi("min_abi", num, &cfg->landlock_min_abi, c->err) < 0)
			return setter_failed(c, "landlock.min_abi");
	}
	if (json_object_get(v, "abi_max")) {
		snprintf(num, sizeof(num), "%lld", (long long)abi_max);
		if (ward_landlock_parse_abi("abi_max", num, &cfg->landlock_abi_max, c->err) < 0)
			return setter_failed(c, "landlock.abi_max");
	}
	return 0;
}

static int apply_seccomp(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	const char *profile = NULL;
	int ptrace = -1;

	if (shape(c, v, "seccomp", "{s?s, s?b}", "profile", &profile, "allow_ptrace", &ptrace) < 0 ||
	    nonempty(c, "seccomp.profile", profile) < 0)
		return -1;
	if (profile) {
		free(cfg->seccomp);
		cfg->seccomp = strdup(profile);
		if (!cfg->seccomp)
			return ward_error_make(c->err, ENOMEM, "policy");
	}
	if (ptrace >= 0)
		cfg->allow_ptrace = ptrace;
	return 0;
}

/* A list of strings, each handed to add(); errors get the element's path. */
static int apply_strings(struct ctx *c, json_t *v, const char *key, struct ward_config *cfg,
			 int (*add)(struct ward_config *, const char *, struct ward_error **))
{
	char where[64];
	size_t i;
	json_t *e;

	json_array_foreach(v, i, e) {
		snprintf(where, sizeof(where), "%s[%zu]", key, i);
		if (json_is_integer(e) && strstr(key, "port")) {
			char num[32];

			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(e));
			if (add(cfg, num, c->err) < 0)
				return setter_failed(c, where);
			continue;
		}
		if (!json_is_string(e))
			return bad(c, where, "must be a string, got %s", ward_json_type_name(e));
		if (add(cfg, json_string_value(e), c->err) < 0)
			return setter_failed(c, where);
	}
	return 0;
}

static int add_allow(struct ward_config *cfg, const char *s, struct ward_error **err)
{
	return ward_netpolicy_add_host(&cfg->netpolicy, false, s, err);
}

static int add_deny(struct ward_config *cfg, const char *s, struct ward_error **err)
{
	return ward_netpolicy_add_host(&cfg->netpolicy, true, s, err);
}

static int add_cidr(struct ward_config *cfg, const char *s, struct ward_error **err)
{
	return ward_netpolicy_add_cidr(&cfg->netpolicy, s, err);
}

static int add_port(struct ward_config *cfg, const char *s, struct ward_error **err)
{
	return ward_netpolicy_add_port(&cfg->netpolicy, s, err);
}

static int apply_credentials(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	char where[64];
	size_t i;
	json_t *e;

	json_array_foreach(v, i, e) {
		const char *host = NULL, *header = NULL, *value = NULL;

		snprintf(where, sizeof(where), "network.credentials[%zu]", i);
		if (shape(c, e, where, "{s:s, s:s, s:s}", "host", &host, "header", &header, "value",
			  &value) < 0 ||
		    nonempty(c, where, host) < 0 || nonempty(c, where, header) < 0 ||
		    nonempty(c, where, value) < 0)
			return -1;
		if (ward_netpolicy_add_credential_parts(&cfg->netpolicy, host, header, value, c->err) < 0)
			return setter_failed(c, where);
	}
	return 0;
}

static int add_request(struct ward_config *cfg, const char *s, struct ward_error **err)
{
	return ward_netpolicy_add_request(&cfg->netpolicy, s, err);
}

/* {"NAME": ["host", ...], ...} */
static int apply_secrets(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	const char *name;
	char where[128];
	json_t *hosts, *h;
	size_t i;

	if (!json_is_object(v))
		return bad(c, "network.secrets", "must be an object of NAME: [hosts], got %s",
			   ward_json_type_name(v));
	json_object_foreach(v, name, hosts) {
		snprintf(where, sizeof(where), "network.secrets.%.64s", name);
		if (!json_is_array(hosts) || json_array_size(hosts) == 0)
			return bad(c, where, "must be a non-empty array of hosts");
		json_array_foreach(hosts, i, h) {
			if (!json_is_string(h))
				return bad(c, where, "must be an array of strings, got %s",
					   ward_json_type_name(h));
			if (ward_netpolicy_add_secret_host(&cfg->netpolicy, name,
							   json_string_value(h), c->err) < 0)
				return setter_failed(c, where);
		}
	}
	return 0;
}

static int apply_network(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	static const char *const proxy_rules[] = { "allow_hosts", "deny_hosts",	 "allow_cidrs",
						   "allow_ports", "credentials", "upstream_ca", "secrets",
						   "requests", NULL };
	const char *s = NULL, *log = NULL, *subnet = NULL, *transport = NULL, *upstream_ca = NULL;
	json_int_t proxy_port;
	json_t *x;

	if (shape(c, v, "network",
		  "{s?s, s?[*], s?[*], s?[*], s?[*], s?[*], s?s, s?I, s?s, s?s, s?[*], s?s, s?{*}, s?[*]}",
		  "mode", &s, "allow_hosts", "deny_hosts", "allow_cidrs", "allow_ports",
		  "credentials", "log", &log, "proxy_port", &proxy_port, "subnet", &subnet,
		  "transport", &transport, "local_ports", "upstream_ca", &upstream_ca, "secrets",
		  "requests") < 0 ||
	    nonempty(c, "network.upstream_ca", upstream_ca) < 0 ||
	    nonempty(c, "network.mode", s) < 0 || nonempty(c, "network.log", log) < 0 ||
	    nonempty(c, "network.subnet", subnet) < 0 ||
	    nonempty(c, "network.transport", transport) < 0)
		return -1;
	if (s && ward_config_set_net(cfg, s, c->err) < 0)
		return setter_failed(c, "network.mode");
	/* a proxy rule asks for the proxy (as on the command line): implied
	 * without a mode, a contradiction with another one */
	for (const char *const *r = proxy_rules; *r; r++) {
		if (!json_object_get(v, *r))
			continue;
		if (!s) {
			cfg->net = WARD_NET_PROXY;
		} else if (strcmp(s, "proxy") != 0) {
			return bad(c, "network.mode",
				   "\"%s\" contradicts network.%s, which needs \"proxy\"", s, *r);
		}
		break;
	}
	if ((x = json_object_get(v, "allow_hosts")) &&
	    apply_strings(c, x, "network.allow_hosts", cfg, add_allow) < 0)
		return -1;
	if ((x = json_object_get(v, "deny_hosts")) &&
	    apply_strings(c, x, "network.deny_hosts", cfg, add_deny) < 0)
		return -1;
	if ((x = json_object_get(v, "allow_cidrs")) &&
	    apply_strings(c, x, "network.allow_cidrs", cfg, add_cidr) < 0)
		return -1;
	if ((x = json_object_get(v, "allow_ports")) &&
	    apply_strings(c, x, "network.allow_ports", cfg, add_port) < 0)
		return -1;
	if ((x = json_object_get(v, "local_ports")) &&
	    apply_strings(c, x, "network.local_ports", cfg, ward_config_add_local_port) < 0)
		return -1;
	if ((x = json_object_get(v, "credentials")) && apply_credentials(c, x, cfg) < 0)
		return -1;
	if (upstream_ca && ward_netpolicy_set_upstream_ca(&cfg->netpolicy, upstream_ca, c->err) < 0)
		return setter_failed(c, "network.upstream_ca");
	if ((x = json_object_get(v, "secrets")) && apply_secrets(c, x, cfg) < 0)
		return -1;
	if ((x = json_object_get(v, "requests")) &&
	    apply_strings(c, x, "network.requests", cfg, add_request) < 0)
		return -1;
	if (log) {
		free(cfg->net_log);
		cfg->net_log = strdup(log);
		if (!cfg->net_log)
			return ward_error_make(c->err, ENOMEM, "policy");
	}
	if (json_object_get(v, "proxy_port")) {
		char num[32];

		snprintf(num, sizeof(num), "%lld", (long long)proxy_port);
		if (ward_config_set_proxy_port(cfg, num, c->err) < 0)
			return setter_failed(c, "network.proxy_port");
	}
	if (subnet && ward_config_set_net_subnet(cfg, subnet, c->err) < 0)
		return setter_failed(c, "network.subnet");
	if (transport && ward_config_set_net_transport(cfg, transport, c->err) < 0)
		return setter_failed(c, "network.transport");
	return 0;
}

/* "workdir": {"roots": [ABSOLUTE PATH...]}: where a request's workdir may lie
 * (ward/admit.h); they replace the default (the directory ward was started
 * in). The hatches for system directories and homes are not policy keys: a
 * policy applies to every later run, may be shared or copied from elsewhere,
 * and would let them hold silently; the person gives them per run, on the
 * command line (--allow-workdir-anywhere, --allow-home-workdir). */
static int refuse_hatches(struct ctx *c, json_t *v)
{
	json_t *n;

	if ((n = json_object_get(v, "allow_anywhere")) || json_object_get(v, "allow_home"))
		return bad(c, n ? "workdir.allow_anywhere" : "workdir.allow_home",
			   "is not a policy key: only the person running ward can give it "
			   "(--allow-workdir-anywhere, --allow-home-workdir)");
	return 0;
}

static int apply_workdir_roots(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	json_t *n, *e;
	size_t i;

	if (!(n = json_object_get(v, "roots")))
		return 0;
	for (i = 0; i < cfg->admit.n_roots; i++)
		free(cfg->admit.roots[i]);
	cfg->admit.n_roots = 0;
	cfg->admit.roots_set = true;
	json_array_foreach(n, i, e) {
		if (!json_is_string(e))
			return bad(c, "workdir.roots", "element %zu must be a string, got %s", i,
				   ward_json_type_name(e));
		if (ward_admit_add_root(&cfg->admit, json_string_value(e), c->err) < 0)
			return setter_failed(c, "workdir.roots");
	}
	return 0;
}

/* "workdir": {"mode": "direct"|"overlay", "protect_defaults": true,
 *             "protect": [PATH...], "allow_write": [PATH...], "placeholders": true,
 *             "roots": [PATH...]} */
static int apply_workdir(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	const char *mode = NULL;
	int placeholders = -1, defaults = -1;
	json_t *n, *e;
	size_t i;

	/* the refused hatches by name, before the shape calls them unknown */
	if (refuse_hatches(c, v) < 0 ||
	    shape(c, v, "workdir", "{s?s, s?b, s?[*], s?[*], s?b, s?[*]}", "mode", &mode,
		  "protect_defaults", &defaults, "protect", "allow_write", "placeholders",
		  &placeholders, "roots") < 0 ||
	    nonempty(c, "workdir.mode", mode) < 0 || apply_workdir_roots(c, v, cfg) < 0)
		return -1;
	if (mode && ward_workdir_parse_mode(mode, &cfg->workdir_mode, c->err) < 0)
		return setter_failed(c, "workdir.mode");
	if (placeholders >= 0)
		cfg->no_placeholders = !placeholders;
	if (defaults >= 0) {
		if (!defaults) {
			ward_protect_free(cfg->protect);
			cfg->protect = ward_protect_new(false, c->err);
			if (!cfg->protect)
				return -1;
		}
	}
	for (int k = 0; k < 2; k++) {
		const char *key = k == 0 ? "protect" : "allow_write";
		char where[64];

		snprintf(where, sizeof(where), "workdir.%s", key);
		if (!(n = json_object_get(v, key)))
			continue;
		json_array_foreach(n, i, e) {
			struct ward_protect *pr = ward_config_protect(cfg, c->err);

			if (!json_is_string(e))
				return bad(c, where, "element %zu must be a string, got %s", i,
					   ward_json_type_name(e));
			if (!pr || (k == 0 ? ward_protect_add(pr, json_string_value(e), c->err) :
					     ward_protect_allow(pr, json_string_value(e), c->err)) < 0)
				return setter_failed(c, where);
		}
	}
	return 0;
}

/* One rule given as an object: {"id", "category", "words", KEY: "value" or
 * ["value", ...]} turned into the rule table's text. */
static int rule_object_text(struct ctx *c, json_t *o, const char *where, char **out)
{
	const char *id, *str;
	char *buf = NULL;
	size_t size = 0;
	FILE *f;
	const char *k;
	json_t *v, *any;
	int rc = 0;

	/* "id" and the text keys strings; the rest a string or an array of them */
	if (shape(c, o, where,
		  "{s:s, s?s, s?s, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o,"
		  " s?o, s?o, s?o, s?s, s?s}",
		  "id", &id, "category", &str, "words", &str, "program", &any, "sub", &any, "flag",
		  &any, "opt", &any, "arg", &any, "word", &any, "noword", &any, "path", &any, "write",
		  &any, "except", &any, "redirect", &any, "upstream", &any, "stdin", &any, "context",
		  &any, "argsubst", &any, "code", &any, "text", &str, "whole", &str) < 0)
		return -1;
	if (json_object_get(o, "except") && !!json_object_get(o, "path") == !!json_object_get(o, "write"))
		return bad(c, where, "except applies to one path or write key: give exactly one");
	f = open_memstream(&buf, &size);
	if (!f)
		return ward_error_make(c->err, errno, "policy");
	fprintf(f, "[%s]\n", json_string_value(json_object_get(o, "id")));
	json_object_foreach(o, k, v) {
		size_t i;
		json_t *e;

		if (strcmp(k, "id") == 0 || strcmp(k, "except") == 0)
			continue;
		if (json_is_string(v)) {
			if (strchr(json_string_value(v), '\n')) {
				rc = bad(c, where, "%s: one line only", k);
				break;
			}
			fprintf(f, "%s = %s\n", k, json_string_value(v));
		} else if (json_is_array(v) && strcmp(k, "text") && strcmp(k, "whole") &&
			   strcmp(k, "words") && strcmp(k, "category")) {
			fprintf(f, "%s =", k);
			json_array_foreach(v, i, e) {
				if (!json_is_string(e) || strpbrk(json_string_value(e), " \t\n")) {
					rc = bad(c, where, "%s[%zu]: must be a string without blanks", k,
						 i);
					break;
				}
				fprintf(f, " %s", json_string_value(e));
			}
			fprintf(f, "\n");
		} else {
			rc = bad(c, where, "%s: must be a string%s", k,
				 strcmp(k, "text") && strcmp(k, "whole") && strcmp(k, "words") &&
						 strcmp(k, "category") ?
					 " or an array of strings" :
					 "");
		}
		if (rc < 0)
			break;
		if ((strcmp(k, "path") == 0 || strcmp(k, "write") == 0) &&
		    (v = json_object_get(o, "except"))) {
			if (json_is_string(v)) {
				fprintf(f, "except = %s\n", json_string_value(v));
			} else if (json_is_array(v)) {
				fprintf(f, "except =");
				json_array_foreach(v, i, e)
					if (json_is_string(e))
						fprintf(f, " %s", json_string_value(e));
				fprintf(f, "\n");
			}
		}
	}
	if (fclose(f) != 0 && rc == 0)
		rc = ward_error_make(c->err, errno, "policy");
	if (rc < 0) {
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

/* "validators": {"enabled": bool, "remove": [ids], "relax": [ids], "add": [rule,
 * ...]} where a rule is an object or a block of the rule table's text.
 * "enabled": false removes every built-in rule (refusals and approvals alike),
 * for hosts that want the kernel's fences alone; commands are still parsed,
 * and "add" can bring back rules of the policy's own. */
static int apply_validators(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	static const char *const lists[] = { "remove", "relax" };
	char where[64];
	size_t i, k;
	json_t *a, *e;
	int enabled = 1;

	if (shape(c, v, "validators", "{s?b, s?[*], s?[*], s?[*], s?{*}}", "enabled", &enabled,
		  "remove", "relax", "add", "except") < 0)
		return -1;
	if (!cfg->rules && !(cfg->rules = ward_rules_new(c->err)))
		return -1;
	if (!enabled) {
		while (ward_rules_count(cfg->rules) > 0)
			if (ward_rules_remove(cfg->rules, ward_rules_id(cfg->rules, 0), c->err) < 0)
				return setter_failed(c, "validators.enabled");
	}
	for (k = 0; k < ARRAY_SIZE(lists); k++) {
		a = json_object_get(v, lists[k]);
		if (!a)
			continue;
		snprintf(where, sizeof(where), "validators.%s", lists[k]);
		json_array_foreach(a, i, e) {
			int rc;

			if (!json_is_string(e))
				return bad(c, where, "element %zu must be a rule id, got %s", i,
					   ward_json_type_name(e));
			rc = k == 0 ? ward_rules_remove(cfg->rules, json_string_value(e), c->err) :
				      ward_rules_relax(cfg->rules, json_string_value(e), c->err);
			if (rc < 0)
				return setter_failed(c, where);
		}
	}
	a = json_object_get(v, "except");
	if (a) {
		const char *id;
		json_t *globs;

		json_object_foreach(a, id, globs) {
			snprintf(where, sizeof(where), "validators.except.%.40s", id);
			if (!json_is_array(globs))
				return bad(c, where, "must be an array of path globs");
			json_array_foreach(globs, i, e) {
				if (!json_is_string(e))
					return bad(c, where, "element %zu must be a path glob", i);
				if (ward_rules_except(cfg->rules, id, json_string_value(e), c->err) < 0)
					return setter_failed(c, where);
			}
		}
	}
	a = json_object_get(v, "add");
	if (!a)
		return 0;
	json_array_foreach(a, i, e) {
		char *text = NULL;
		int rc;

		snprintf(where, sizeof(where), "validators.add[%zu]", i);
		if (json_is_string(e))
			text = strdup(json_string_value(e));
		else if (!json_is_object(e))
			return bad(c, where, "must be a rule object or the rule table's text");
		else if (rule_object_text(c, e, where, &text) < 0)
			return -1;
		if (!text)
			return ward_error_make(c->err, ENOMEM, "policy");
		rc = ward_rules_add_text(cfg->rules, text, where, c->err);
		free(text);
		if (rc < 0)
			return setter_failed(c, "validators.add");
	}
	return 0;
}

static int apply_rate_limit(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	static const char *const keys[] = { "per_minute", "per_hour" };
	static const char *const names[] = { "rate_limit.per_minute", "rate_limit.per_hour" };
	unsigned *dst[] = { &cfg->rate_per_minute, &cfg->rate_per_hour };
	json_int_t n[2];
	size_t k;

	if (shape(c, v, "rate_limit", "{s?I, s?I}", keys[0], &n[0], keys[1], &n[1]) < 0)
		return -1;
	for (k = 0; k < 2; k++) {
		if (!json_object_get(v, keys[k]))
			continue;
		if (n[k] < 0 || n[k] > WARD_RATE_MAX)
			return bad(c, names[k], "must be an integer from 0 (no limit) to %d",
				   WARD_RATE_MAX);
		*dst[k] = (unsigned)n[k];
	}
	return 0;
}

/* "limits": {"memory": "512M" or bytes, "memory_swap", "pids", "cpus",
 * "io_weight", "max_file_size", "tmpfs_size"}; each value checked as its
 * flag is. */
static int apply_limits(struct ctx *c, json_t *v, struct ward_config *cfg)
{
	char where[64], num[64];
	json_t *any;
	int i;

	/* a size is a string or bytes, cpus a number: the types checked below */
	if (shape(c, v, "limits", "{s?o, s?o, s?o, s?o, s?o, s?o, s?o}", "memory", &any,
		  "memory_swap", &any, "pids", &any, "cpus", &any, "io_weight", &any,
		  "max_file_size", &any, "tmpfs_size", &any) < 0)
		return -1;
	for (i = 0; i < WARD_LIMIT_COUNT; i++) {
		json_t *n = json_object_get(v, ward_limit_key((enum ward_limit)i));
		const char *text;

		if (!n)
			continue;
		snprintf(where, sizeof(where), "limits.%s", ward_limit_key((enum ward_limit)i));
		if (json_is_string(n)) {
			text = json_string_value(n);
		} else if (json_is_integer(n)) {
			snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(n));
			text = num;
		} else if (json_is_real(n) && i == WARD_LIMIT_CPUS) {
			snprintf(num, sizeof(num), "%.6f", json_real_value(n));
			text = num;
		} else {
			return bad(c, where, "must be %s", i == WARD_LIMIT_CPUS ? "a number" :
							   i == WARD_LIMIT_PIDS || i == WARD_LIMIT_IO_WEIGHT ?
							   "an integer" : "a size (\"512M\") or bytes");
		}
		if (ward_limits_set(&cfg->limits, (enum ward_limit)i, text, c->err) < 0)
			return setter_failed(c, where);
	}
	return 0;
}

/* Jansson seeds its hash tables from /dev/urandom (open, read, close) when
 * the first object is made; getrandom() is one call. Without it, or after
 * another seed, jansson keeps its own way (json_object_seed() acts once). */
static void seed_json(void)
{
	size_t seed = 0;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed) && seed)
		json_object_seed(seed);
}

int ward_policy_apply(const char *text, size_t len, const char *origin, struct ward_config *cfg,
		      struct ward_error **err)
{
	struct ctx c = { .origin = origin ? origin : "policy", .err = err };
	const char *mode = NULL, *hostname = NULL, *shell = NULL;
	json_t *ns, *env, *mounts, *ll, *sc, *net, *wd, *val, *rl, *sess, *lim;
	json_int_t timeout;
	int uid0 = -1, allow_nested = -1;
	json_error_t jerr;
	json_t *root;
	int rc = -1;

	snprintf(c.prefix, sizeof(c.prefix), "policy '%s'", c.origin);
	if (len > WARD_POLICY_MAX)
		return bad(&c, "file", "larger than %d bytes", WARD_POLICY_MAX);
	seed_json();
	/* RFC 8259 lets a parser ignore a byte order mark; some editors write one */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3;
		len -= 3;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return bad(&c, "file", "not valid JSON: %s at line %d column %d", jerr.text, jerr.line,
			   jerr.column);
	if (!json_is_object(root)) {
		bad(&c, "file", "must be a JSON object");
		goto out;
	}
	ns = env = mounts = ll = sc = net = wd = val = rl = sess = lim = NULL;
	if (shape(&c, root, NULL,
		  "{s?s, s?I, s?[*], s?s, s?b, s?b, s?o, s?[*], s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?o, s?s}",
		  "sandbox", &mode, "timeout", &timeout, "namespaces", "hostname", &hostname, "uid0",
		  &uid0, "allow_nested", &allow_nested, "env", &env, "mounts", "landlock", &ll, "seccomp", &sc,
		  "network", &net, "workdir", &wd, "validators", &val, "rate_limit", &rl, "session",
		  &sess, "limits", &lim, "shell", &shell) < 0 ||
	    nonempty(&c, "sandbox", mode) < 0 || nonempty(&c, "hostname", hostname) < 0)
		goto out;
	ns = json_object_get(root, "namespaces");
	mounts = json_object_get(root, "mounts");
	if (shell) {
		/* the shell a command string runs with: "sh" or "bash" */
		if (strcmp(shell, "bash") == 0) {
			cfg->shell_bash = true;
		} else if (strcmp(shell, "sh") == 0) {
			cfg->shell_bash = false;
		} else {
			bad(&c, "shell", "unknown shell \"%s\" (known: sh, bash)", shell);
			goto out;
		}
	}
	if (mode) {
		if (strcmp(mode, "required") == 0)
			cfg->mode = WARD_SANDBOX_REQUIRED;
		else if (strcmp(mode, "off") == 0)
			cfg->mode = WARD_SANDBOX_OFF;
		else {
			bad(&c, "sandbox", "unknown mode \"%s\" (known: required, off)", mode);
			goto out;
		}
	}
	if (json_object_get(root, "timeout") && ward_config_set_timeout(cfg, timeout, err) < 0) {
		setter_failed(&c, "timeout");
		goto out;
	}
	if (ns && apply_namespaces(&c, ns, cfg) < 0)
		goto out;
	if (hostname && ward_config_set_hostname(cfg, hostname, c.err) < 0) {
		setter_failed(&c, "hostname");
		goto out;
	}
	if (uid0 >= 0)
		cfg->uid0 = uid0;
	if (allow_nested >= 0)
		cfg->allow_nested = allow_nested;
	/* each section's shape is checked where it is applied */
	if ((env && apply_env(&c, env, cfg) < 0) || (mounts && apply_mounts(&c, mounts, cfg) < 0) ||
	    (ll && apply_landlock(&c, ll, cfg) < 0) || (sc && apply_seccomp(&c, sc, cfg) < 0) ||
	    (net && apply_network(&c, net, cfg) < 0) || (wd && apply_workdir(&c, wd, cfg) < 0) ||
	    (val && apply_validators(&c, val, cfg) < 0) ||
	    (rl && apply_rate_limit(&c, rl, cfg) < 0) || (lim && apply_limits(&c, lim, cfg) < 0) ||
	    (sess && ward_session_policy_apply(sess, c.origin, cfg, err) < 0))
		goto out;
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int ward_policy_load(const char *path, struct ward_config *cfg, struct ward_error **err)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	size_t got = 0, cap;
	struct stat st;

	/* Not a final symbolic link, the caller's or root's, writable by no
	 * one else, in directories no one else can write (util-internal.h):
	 * the policy decides what the sandbox lets through. A FIFO no one
	 * writes to does not hang ward (a pipe, as from --policy <(...), is
	 * read to its end, blocking, below). */
	fd = ward_hostpath_open_file("policy", path, WARD_HOSTPATH_CONFIG, O_RDONLY, 0, err);
	if (fd < 0) {
		if (err && *err)
			(*err)->kind = WARD_ERR_INVALID_PARAMETERS;
		return -1;
	}
	if (fstat(fd, &st) < 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
					    "stat policy '%s'", path);
	if (S_ISDIR(st.st_mode))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, EISDIR,
					    "policy '%s'", path);
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "policy '%s' is not a regular file", path);
	/* A buffer the size of the file (+1 to see its end), grown for a pipe
	 * or a file growing meanwhile, up to one byte past the largest policy:
	 * a 1 MiB buffer would be an mmap and a munmap on every start. */
	cap = S_ISREG(st.st_mode) && st.st_size < WARD_POLICY_MAX ? (size_t)st.st_size + 1 : 4096;
	buf = malloc(cap);
	if (!buf)
		return ward_error_make(err, ENOMEM, "policy");
	while (got <= WARD_POLICY_MAX) {
		ssize_t n;

		if (got == cap) {
			size_t more = cap * 2 > WARD_POLICY_MAX + 1 ? WARD_POLICY_MAX + 1 : cap * 2;
			char *g = realloc(buf, more);

			if (!g)
				return ward_error_make(err, ENOMEM, "policy");
			buf = g;
			cap = more;
		}
		n = read(fd, buf + got, cap - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
						    "read policy '%s'", path);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return ward_policy_apply(buf, got, path, cfg, err);
}

char *ward_policy_default_path(void)
{
	const char *env = getenv("WARD_POLICY"), *xdg = getenv("XDG_CONFIG_HOME"),
		   *home = getenv("HOME");
	char *p = NULL;

	if (env && *env)
		return strdup(env);
	if (xdg && *xdg) {
		if (asprintf(&p, "%s/ward/policy.json", xdg) >= 0 && access(p, F_OK) == 0)
			return p;
		free(p);
		p = NULL;
	} else if (home && *home) {
		if (asprintf(&p, "%s/.config/ward/policy.json", home) >= 0 && access(p, F_OK) == 0)
			return p;
		free(p);
		p = NULL;
	}
	if (access("/etc/ward/policy.json", F_OK) == 0)
		return strdup("/etc/ward/policy.json");
	return NULL;
}
