/* request.c — request parsing and result rendering (jansson); pure code. */
#include "ward/request.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/net/net-internal.h"
#include "runtime/util/util-internal.h"

static int invalid(struct ward_error **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int invalid(struct ward_error **err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ward_error_makev(err, WARD_ERR_INVALID_PARAMETERS, 0, fmt, ap);
	va_end(ap);
	return -1;
}

void ward_request_release(struct ward_request *req)
{
	free(req->command);
	free(req->workdir);
	memset(req, 0, sizeof(*req));
}

int ward_request_parse(const char *text, size_t len, struct ward_request *req,
		       struct ward_error **err)
{
	const char *command = NULL, *workdir = NULL;
	int approved = 0, shell = 1;
	json_error_t jerr;
	json_t *root, *v = NULL, *sh = NULL;
	int rc = -1;

	memset(req, 0, sizeof(*req));
	if (len > WARD_REQUEST_MAX)
		return invalid(err, "request is larger than %d bytes", WARD_REQUEST_MAX);
	if (len == 0 || strspn(text, " \t\r\n") == len)
		return invalid(err, "request is empty: expected a JSON object with \"command\"");
	/* RFC 8259 lets a parser ignore a byte order mark; editors on some
	 * systems write one */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
		text += 3;
		len -= 3;
	}
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root && json_error_code(&jerr) == json_error_null_character)
		/* jansson's own text names its flag, JSON_ALLOW_NUL */
		return invalid(err, "request is not valid JSON: a string holds \\u0000 (NUL), "
				    "which no command, path or argument can contain, at line %d "
				    "column %d", jerr.line, jerr.column);
	if (!root)
		return invalid(err, "request is not valid JSON: %s at line %d column %d", jerr.text,
			       jerr.line, jerr.column);
	if (!json_is_object(root)) {
		invalid(err, "request must be a JSON object, got %s", ward_json_type_name(root));
		goto out;
	}
	/* null stands for "not given" */
	ward_jschema_drop_nulls(root);
	if (ward_jschema_unpack(root, "request", NULL, err, "{s:s, s?s, s?o, s?b, s?o}", "command",
				&command, "workdir", &workdir, "timeout", &v, "approved", &approved,
				"shell", &sh) < 0)
		goto out;
	/* "shell": true or "sh" (/bin/sh -c), "bash" (/bin/bash -c), false (none) */
	if (sh && json_is_boolean(sh)) {
		shell = json_is_true(sh);
	} else if (sh && json_is_string(sh) && strcmp(json_string_value(sh), "bash") == 0) {
		req->bash = true;
	} else if (sh && !(json_is_string(sh) && strcmp(json_string_value(sh), "sh") == 0)) {
		if (json_is_string(sh))
			invalid(err, "request: shell: unknown shell '%s' (known: sh, bash, true, false)",
				json_string_value(sh));
		else
			invalid(err, "request: shell: must be \"sh\", \"bash\" or a boolean, got %s",
				ward_json_type_name(sh));
		goto out;
	}
	if (strspn(command, " \t\r\n") == strlen(command)) {
		invalid(err, "request: command: is empty");
		goto out;
	}
	if (workdir && !*workdir) {
		invalid(err, "request: workdir: is empty");
		goto out;
	}
	if (v) {
		if (json_is_real(v) && fabs(json_real_value(v)) < 1e18 &&
		    json_real_value(v) == (double)(long long)json_real_value(v)) {
			invalid(err, "request: timeout: must be a whole number of seconds written as "
				     "an integer (no '.' or exponent), got %g", json_real_value(v));
			goto out;
		}
		if (json_is_real(v)) {
			invalid(err, "request: timeout: must be a whole number of seconds, got %g",
				json_real_value(v));
			goto out;
		}
		if (!json_is_integer(v)) {
			invalid(err, "request: timeout: must be an integer number of seconds, got %s",
				ward_json_type_name(v));
			goto out;
		}
		req->timeout = json_integer_value(v);
		if (req->timeout < 1) {
			invalid(err, "request: timeout: must be at least 1 second, got %lld",
				req->timeout);
			goto out;
		}
		if (req->timeout > WARD_TIMEOUT_MAX) {
			invalid(err, "request: timeout: must be at most %d seconds, got %lld",
				WARD_TIMEOUT_MAX, req->timeout);
			goto out;
		}
	}
	req->approved = approved;
	req->no_shell = shell == 0;
	req->command = strdup(command);
	req->workdir = workdir ? strdup(workdir) : NULL;
	if (!req->command || (workdir && !req->workdir)) {
		ward_error_make(err, ENOMEM, "request");
		goto out;
	}
	/* execve() refuses any one argument over MAX_ARG_STRLEN (32 pages):
	 * say so now rather than as /bin/sh's E2BIG after the sandbox is made */
	if (!req->no_shell && strlen(req->command) >= WARD_SHELL_COMMAND_MAX) {
		invalid(err, "request: command: is %zu bytes: a command for /bin/sh -c may be at most %d",
			strlen(req->command), WARD_SHELL_COMMAND_MAX - 1);
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	if (rc < 0)
		ward_request_release(req);
	return rc;
}

static json_t *text_value(const char *s, size_t len)
{
	size_t n;
	char *clean = ward_utf8_sanitize(s ? s : "", s ? len : 0, &n);
	json_t *v;

	if (!clean)
		return NULL;
	v = json_stringn(clean, n);
	free(clean);
	return v;
}

static json_t *error_object(const struct ward_error *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "kind", json_string(ward_error_kind_name(e->kind)));
	json_object_set_new(o, "message", text_value(e->message, strlen(e->message)));
	if (e->rule[0])
		json_object_set_new(o, "rule", text_value(e->rule, strlen(e->rule)));
	return o;
}

static json_t *namespaces_array(unsigned ns)
{
	static const char *const names[] = { "user", "mount", "pid", "net", "ipc", "uts", "cgroup" };
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ns & (1u << i))
			json_array_append_new(a, json_string(names[i]));
	return a;
}

/* "a,b,c" as ["a", "b", "c"]; items may carry " (abi N)". */
static json_t *name_list(const char *csv)
{
	json_t *a = json_array();

	while (csv && *csv) {
		size_t n = strcspn(csv, ",");

		if (n)
			json_array_append_new(a, json_stringn(csv, n));
		csv += n;
		if (*csv == ',')
			csv++;
	}
	return a;
}

static json_t *landlock_object(const struct ward_landlock_report *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "status", json_string(r->status));
	json_object_set_new(o, "abi", json_integer(r->abi));
	json_object_set_new(o, "kernel_abi", json_integer(r->kernel_abi));
	json_object_set_new(o, "abi_max", r->abi_max ? json_integer(r->abi_max) : json_null());
	json_object_set_new(o, "enforced", name_list(r->enforced));
	json_object_set_new(o, "unavailable", name_list(r->unavailable));
	return o;
}

static const char *const ft_names[] = { "none", "file", "dir", "symlink", "other" };
static const char *const change_names[] = { "added", "modified", "deleted", "mode", "replaced" };

static json_t *workdir_object(const struct ward_workdir_report *w)
{
	json_t *o = json_object(), *prot = json_array(), *viol = json_array();

	json_object_set_new(o, "mode", json_string(ward_workdir_mode_name(w->mode)));
	json_object_set_new(o, "protection", json_boolean(w->protection));
	for (size_t i = 0; i < w->n_protected; i++) {
		json_t *p = json_object();

		json_object_set_new(p, "path", text_value(w->protected_paths[i].path,
							  strlen(w->protected_paths[i].path)));
		json_object_set_new(p, "state",
				    json_string(ward_protect_state_name(w->protected_paths[i].state)));
		json_array_append_new(prot, p);
	}
	json_object_set_new(o, "protected", prot);
	for (size_t i = 0; i < w->n_violations; i++) {
		json_t *v = json_object();

		json_object_set_new(v, "path", text_value(w->violations[i].path,
							  strlen(w->violations[i].path)));
		json_object_set_new(v, "seen", json_string(w->violations[i].seen));
		json_array_append_new(viol, v);
	}
	json_object_set_new(o, "violations", viol);
	if (w->changes) {
		json_t *c = json_object(), *list = json_array();

		json_object_set_new(c, "action", w->change_action[0] ? json_string(w->change_action) :
								       json_null());
		json_object_set_new(c, "name", w->change_name[0] ? json_string(w->change_name) :
								  json_null());
		size_t count = ward_changeset_count(w->changes);

		/* an npm install is tens of thousands of files: the result stays
		 * bounded, `ward diff NAME` has them all */
		json_object_set_new(c, "count", json_integer((json_int_t)count));
		json_object_set_new(c, "entries_omitted",
				    json_integer(count > WARD_RESULT_MAX_CHANGES ?
							 (json_int_t)(count - WARD_RESULT_MAX_CHANGES) :
							 0));
		for (size_t i = 0; i < count && i < WARD_RESULT_MAX_CHANGES; i++) {
			const struct ward_change *ch = ward_changeset_get(w->changes, i);
			json_t *e = json_object();

			json_object_set_new(e, "path", text_value(ch->path[0] ? ch->path : ".",
								  ch->path[0] ? strlen(ch->path) : 1));
			json_object_set_new(e, "change", json_string(change_names[ch->kind]));
			json_object_set_new(e, "type", json_string(ft_names[ch->type]));
			if (ch->old_type != ch->type)
				json_object_set_new(e, "old_type", json_string(ft_names[ch->old_type]));
			if (ch->size >= 0)
				json_object_set_new(e, "size", json_integer(ch->size));
			if (ch->old_size >= 0)
				json_object_set_new(e, "old_size", json_integer(ch->old_size));
			if (ch->type != WARD_FT_NONE) {
				char m[8];

				snprintf(m, sizeof(m), "%04o", (unsigned)ch->mode);
				json_object_set_new(e, "mode", json_string(m));
			}
			if (ch->old_type != WARD_FT_NONE && ch->old_mode != ch->mode) {
				char m[8];

				snprintf(m, sizeof(m), "%04o", (unsigned)ch->old_mode);
				json_object_set_new(e, "old_mode", json_string(m));
			}
			if (ch->target)
				json_object_set_new(e, "target",
						    text_value(ch->target, strlen(ch->target)));
			if (ch->warn) {
				json_t *wl = json_array();

				for (unsigned bit = 1; bit; bit <<= 1)
					if ((ch->warn & bit) && ward_change_warning_name(bit))
						json_array_append_new(
							wl, json_string(ward_change_warning_name(bit)));
				json_object_set_new(e, "warnings", wl);
			}
			json_array_append_new(list, e);
		}
		json_object_set_new(c, "entries", list);
		json_object_set_new(o, "changes", c);
	} else {
		json_object_set_new(o, "changes", json_null());
	}
	return o;
}

static json_t *maybe_integer(bool have, uint64_t v)
{
	return have ? json_integer((json_int_t)v) : json_null();
}

/* {"memory": {"value": N, "mechanism": "cgroup v2 memory.max"}, ...}: every
 * limit that was applied, and how. */
static json_t *limits_object(const struct ward_resources *r)
{
	static const char *const extra[] = { "core",	       "nofile",	 "inotify_instances",
					     "inotify_watches", "fanotify_groups", "fanotify_marks",
					     "namespaces",	       "sigpending",	 "msgqueue",
					     "nproc",	       "memlock" };
	json_t *o = json_object();
	int i;

	for (i = 0; i < WARD_APPLIED_COUNT; i++) {
		const struct ward_limit_applied *a = &r->applied[i];
		json_t *l;

		if (!a->mechanism[0])
			continue;
		l = json_object();
		if (i == WARD_LIMIT_CPUS) {
			json_object_set_new(l, "value", json_real((double)a->value / WARD_CPU_PERIOD_US));
			json_object_set_new(l, "quota_us", json_integer((json_int_t)a->value));
			json_object_set_new(l, "period_us", json_integer(WARD_CPU_PERIOD_US));
		} else {
			json_object_set_new(l, "value", json_integer((json_int_t)a->value));
		}
		json_object_set_new(l, "mechanism", json_string(a->mechanism));
		json_object_set_new(o, i < WARD_LIMIT_COUNT ? ward_limit_key((enum ward_limit)i) :
							      extra[i - WARD_LIMIT_COUNT], l);
	}
	return o;
}

static json_t *resources_object(const struct ward_resources *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "cgroup", r->cgroup_version ? json_integer(r->cgroup_version) :
							     json_null());
	json_object_set_new(o, "memory_peak_bytes", maybe_integer(r->have_memory_peak,
								  r->memory_peak));
	json_object_set_new(o, "pids_peak", maybe_integer(r->have_pids_peak, r->pids_peak));
	json_object_set_new(o, "cpu_user_ms", maybe_integer(r->have_cpu, r->cpu_user_us / 1000));
	json_object_set_new(o, "cpu_system_ms",
			    maybe_integer(r->have_cpu, r->cpu_system_us / 1000));
	json_object_set_new(o, "oom_killed", json_boolean(r->oom_killed));
	json_object_set_new(o, "measured_by", r->measured_by[0] ? json_string(r->measured_by) :
								  json_null());
	json_object_set_new(o, "limits", limits_object(r));
	json_object_set_new(o, "note", r->note[0] ? json_string(r->note) : json_null());
	return o;
}

char *ward_result_to_json(const struct ward_result *res)
{
	json_t *o = json_object(), *layers = json_object();
	char *s;

	json_object_set_new(o, "output", text_value(res->output, res->output_len));
	json_object_set_new(o, "exit_code", json_integer(res->exit_code));
	json_object_set_new(o, "success", json_boolean(res->exit_code == 0 && !res->error));
	json_object_set_new(o, "sandboxed", json_boolean(res->sandboxed));
	json_object_set_new(o, "stderr", text_value(res->stderr_text, res->stderr_len));
	json_object_set_new(o, "stdout", res->stdout_text ? text_value(res->stdout_text, res->stdout_len) :
							    json_string(""));
	json_object_set_new(o, "timed_out", json_boolean(res->timed_out));
	json_object_set_new(o, "signal", res->signal ? json_integer(res->signal) : json_null());
	json_object_set_new(o, "duration_ms", json_integer(res->duration_ms));
	json_object_set_new(o, "truncated_bytes", json_integer((json_int_t)res->truncated_bytes));
	json_object_set_new(o, "stdout_bytes", json_integer((json_int_t)res->stdout_bytes));
	json_object_set_new(o, "stderr_bytes", json_integer((json_int_t)res->stderr_bytes));
	json_object_set_new(layers, "namespaces", namespaces_array(res->namespaces));
	json_object_set_new(layers, "view", json_boolean(res->view));
	json_object_set_new(layers, "hostname",
			    res->hostname_skipped ? json_string("skipped: sethostname EPERM "
								"(the UTS namespace is still new)") :
			    res->hostname[0]	  ? json_string(res->hostname) :
						    json_null());
	json_object_set_new(layers, "cgroup", res->resources.cgroup_version ?
						      json_integer(res->resources.cgroup_version) :
						      json_null());
	json_object_set_new(layers, "landlock", res->fenced ? landlock_object(&res->fences.landlock) :
							      json_null());
	json_object_set_new(layers, "seccomp",
			    res->fenced ? json_string(res->fences.seccomp_profile) : json_null());
	json_object_set_new(layers, "capabilities_dropped",
			    json_boolean(res->fenced && res->fences.caps_dropped));
	json_object_set_new(layers, "no_new_privs", json_boolean(res->fenced && res->fences.no_new_privs));
	json_object_set_new(layers, "nested", json_boolean(res->nested));
	{
		static const char *const modes[] = { "none", "proxy", "host" };
		json_t *net = json_object(), *recs = json_array();
		size_t i;

		json_object_set_new(net, "mode", json_string(modes[res->net_mode <= WARD_NET_HOST ?
									  res->net_mode : 0]));
		json_object_set_new(net, "transport", res->net_transport[0] ?
							      json_string(res->net_transport) :
							      json_null());
		json_object_set_new(net, "proxy", res->net_proxy[0] ? json_string(res->net_proxy) :
								      json_null());
		json_object_set_new(layers, "network", net);
		for (i = 0; i < res->n_net_records; i++)
			json_array_append_new(recs, ward_net_record_json(&res->net_records[i]));
		json_object_set_new(o, "network", recs);
	}
	json_object_set_new(o, "layers", layers);
	json_object_set_new(o, "workdir", res->workdir ? workdir_object(res->workdir) : json_null());
	json_object_set_new(o, "resources", resources_object(&res->resources));
	json_object_set_new(o, "error", res->error ? error_object(res->error) : json_null());
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return s;
}

char *ward_error_to_result_json(const struct ward_error *err)
{
	struct ward_result res;

	memset(&res, 0, sizeof(res));
	res.output = (char *)"";
	res.stderr_text = (char *)"";
	res.exit_code = 125;
	res.error = (struct ward_error *)err;
	return ward_result_to_json(&res);
}
