/* mcp.c — the methods of `ward serve`: sessions (create, exec, cd, env,
 * aliases, history, changes) as JSON-RPC methods, and the same as Model
 * Context Protocol tools (initialize, tools/list, tools/call), since that is
 * how agent hosts attach tools. The tools' names, descriptions and input
 * schemas are data: runtime/cli/mcp-tools.json, built in.
 *
 * A command's own failure (refused, timed out) is not a JSON-RPC error but a
 * result with "error", as `ward run --json` gives it. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "runtime/cli/cli-internal.h"
#include "runtime/util/util-internal.h"
#include "runtime/cli/serve-internal.h"
#include "ward/outbuf.h"
#include "ward/env.h"
#include "ward/policy.h"
#include "ward/request.h"
#include "ward/session.h"
#include "ward/workdir.h"

/* WARD_VERSION comes from the build (the Makefile's VERSION). */

/* The MCP tools, data: runtime/cli/mcp-tools.json embedded as the rules table
 * is (filters/rules.c), NUL-terminated, parsed once (mcp_tools()). The path
 * is the build's, from the top of the tree. */
__asm__(".section .rodata\n"
	".globl ward_mcp_tools_json\n"
	".hidden ward_mcp_tools_json\n"
	".type ward_mcp_tools_json, @object\n"
	"ward_mcp_tools_json:\n"
	".incbin \"runtime/cli/mcp-tools.json\"\n"
	".byte 0\n"
	".previous\n");
extern const char ward_mcp_tools_json[] __attribute__((visibility("hidden")));

/* ---- parameters -------------------------------------------------------------- */

/* The parameters against the method's shape (runtime/jschema-internal.h):
 * jansson checks the types, the required keys and refuses any other by
 * name; null stands for "not given"; no string holds a NUL. */
static int params_unpack(json_t *params, struct rpc_error *e, const char *fmt, ...)
{
	struct ward_error *w = NULL;
	va_list ap;
	int rc;

	ward_jschema_drop_nulls(params);
	va_start(ap, fmt);
	rc = ward_jschema_vunpack(params, NULL, NULL, &w, fmt, ap);
	va_end(ap);
	if (rc == 0)
		rc = ward_jschema_no_nul(params, NULL, &w);
	if (rc < 0) {
		rpc_fail(e, RPC_INVALID_PARAMS, "%s", w ? w->message : "out of memory");
		ward_error_free(w);
	}
	return rc;
}

/* An integer parameter's bounds, which a format cannot say. */
static int p_range(const char *key, json_int_t v, long long lo, long long hi, struct rpc_error *e)
{
	if (v < lo || v > hi)
		return rpc_fail(e, RPC_INVALID_PARAMS, "%s: must be from %lld to %lld, got %lld", key,
				lo, hi, (long long)v);
	return 0;
}

/* ---- sessions ------------------------------------------------------------------ */

static json_t *strv_object(char **v)
{
	json_t *o = json_object();
	size_t i;

	for (i = 0; v && v[i]; i++) {
		char *eq = strchr(v[i], '=');

		if (!eq)
			continue;
		*eq = '\0';
		json_object_set_new(o, v[i], json_string(eq + 1));
	}
	return o;
}

/* Whether one more session (holding a sandbox of its own if shared) may be
 * made now: the caps on sessions and sandboxes alive, and the rate limit,
 * which counts session creations as it counts commands. sv->lock held. */
static int admit_session(struct server *sv, bool shared, struct ward_error **err)
{
	struct timespec ts;
	int rc;

	if (sv->n_sessions >= sv->lim.sessions)
		return ward_error_make_kind(err, WARD_ERR_EXECUTION_FAILED, 0,
					    "too many sessions: %zu alive, the most allowed "
					    "(policy session.limits.sessions); close one first",
					    sv->n_sessions);
	if (shared && sv->sandboxes >= sv->lim.sandboxes)
		return ward_error_make_kind(err, WARD_ERR_EXECUTION_FAILED, 0,
					    "too many sandboxes: %zu alive, the most allowed "
					    "(policy session.limits.sandboxes)",
					    sv->sandboxes);
	clock_gettime(CLOCK_REALTIME, &ts);
	pthread_mutex_lock(&sv->rate_lock);
	rc = ward_ratelog_take(&sv->ratelog, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000,
			       sv->rate_per_minute, sv->rate_per_hour, NULL, err);
	pthread_mutex_unlock(&sv->rate_lock);
	return rc;
}

/* Make a session as params say; sv->lock held. *shared: it holds a sandbox. */
static struct ward_error *make_session(struct server *sv, json_t *params, struct ward_session **out,
				       bool *shared)
{
	struct ward_config cfg;
	struct ward_session_options opt;
	struct ward_error *err = NULL;
	const char *workdir = NULL, *iso = NULL, *cwd = NULL, *oldpwd = NULL, *sh;
	json_t *env = json_object_get(params, "env");
	long long timeout = 0;

	ward_config_init(&cfg);
	ward_session_options_init(&opt);
	if (serve_config(sv->o, &cfg, &err) < 0)
		goto fail;
	if (ward_session_options_from_config(&cfg, &opt, &err) < 0)
		goto fail;
	serve_session_defaults(sv->o, &opt);
	workdir = json_string_value(json_object_get(params, "workdir"));
	iso = json_string_value(json_object_get(params, "isolation"));
	cwd = json_string_value(json_object_get(params, "cwd"));
	oldpwd = json_string_value(json_object_get(params, "oldpwd"));
	if (json_is_integer(json_object_get(params, "timeout")))
		timeout = json_integer_value(json_object_get(params, "timeout"));
	/* the agent's word: under a root (the person's -C counts as one) */
	if (workdir && (ward_config_set_workdir(&cfg, workdir, &err) < 0 ||
			ward_admit_request(&cfg.admit, cfg.workdir, sv->o->workdir, &err) < 0))
		goto fail;
	if (iso)
		opt.isolation = strcmp(iso, "shared") == 0 ? WARD_SESSION_SHARED : WARD_SESSION_FRESH;
	sh = json_string_value(json_object_get(params, "shell"));
	if (sh)
		opt.shell = strcmp(sh, "bash") == 0 ? WARD_SESSION_SHELL_BASH : WARD_SESSION_SHELL_SH;
	*shared = opt.isolation == WARD_SESSION_SHARED && !opt.ssh.host;
	if (admit_session(sv, *shared, &err) < 0)
		goto fail;
	cfg.cancel_fd = sv->cancel_fd;
	if (timeout)
		opt.timeout = (int)timeout;
	if (json_is_string(env))
		opt.empty_env = strcmp(json_string_value(env), "empty") == 0;
	if (json_is_object(env)) /* exactly these variables */
		opt.empty_env = true;
	if (ward_session_new(&cfg, &opt, out, &err) < 0)
		goto fail;
	ward_session_share_ratelog(*out, &sv->ratelog, &sv->rate_lock);
	if (json_is_object(env)) {
		const char *k;
		json_t *v;
		char **cur = ward_session_env(*out);
		size_t i;

		for (i = 0; cur && cur[i]; i++) {
			char *eq = strchr(cur[i], '=');

			*eq = '\0';
			ward_session_unsetenv(*out, cur[i], NULL);
		}
		ward_env_free(cur);
		json_object_foreach(env, k, v)
			if (ward_session_setenv(*out, k, json_string_value(v), &err) < 0)
				goto fail_session;
	}
	if (cwd && ward_session_set_cwd(*out, cwd, oldpwd, &err) < 0)
		goto fail_session;
	ward_session_options_release(&opt);
	return NULL;
fail_session:
	ward_session_free(*out);
	*out = NULL;
fail:
	ward_session_options_release(&opt);
	ward_config_release(&cfg);
	return err;
}

/* Find (and mark busy) the session named by params.session; without one,
 * the default session, made on first use. */
struct entry *mcp_take_session(struct server *sv, json_t *params, struct rpc_error *e)
{
	/* a string, when given: the method's shape was checked */
	const char *id = json_string_value(json_object_get(params, "session"));
	struct entry *found = NULL;
	size_t i;

	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->n_sessions; i++)
		if (strcmp(sv->sessions[i].id, id ? id : "default") == 0)
			found = &sv->sessions[i];
	if (!found && !id) {
		struct ward_session *s = NULL;
		bool shared = false;
		struct ward_error *w = make_session(sv, NULL, &s, &shared);
		struct entry *g;

		if (w) {
			pthread_mutex_unlock(&sv->lock);
			rpc_from(e, w);
			return NULL;
		}
		g = realloc(sv->sessions, (sv->n_sessions + 1) * sizeof(*g));
		if (!g) {
			pthread_mutex_unlock(&sv->lock);
			ward_session_free(s);
			rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
			return NULL;
		}
		sv->sessions = g;
		found = &sv->sessions[sv->n_sessions++];
		memset(found, 0, sizeof(*found));
		strcpy(found->id, "default");
		found->s = s;
		found->shared = shared;
		sv->sandboxes += shared;
	}
	if (!found) {
		pthread_mutex_unlock(&sv->lock);
		rpc_fail(e, RPC_INVALID_PARAMS, "no session \"%s\"", id);
		return NULL;
	}
	found->busy++;
	pthread_mutex_unlock(&sv->lock);
	return found;
}

/* Entries may move when the table grows: release by id. */
void mcp_give_back(struct server *sv, const char *id)
{
	size_t i;

	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->n_sessions; i++)
		if (strcmp(sv->sessions[i].id, id) == 0)
			sv->sessions[i].busy--;
	pthread_cond_broadcast(&sv->idle);
	pthread_mutex_unlock(&sv->lock);
}

/* ---- methods ---------------------------------------------------------------------- */

typedef int (*method_fn)(struct server *sv, json_t *params, json_t **result, struct rpc_error *e);

static json_t *session_info(const char *id, struct ward_session *s)
{
	char *pwd = ward_session_pwd(s);
	bool bash = strcmp(ward_session_shell(s), "/bin/bash") == 0 &&
		    strcmp(ward_session_backend(s), "ssh") != 0;
	bool shared = ward_session_isolation(s) == WARD_SESSION_SHARED;
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:s}", "session", id, "workdir",
			      ward_session_workdir(s), "cwd", pwd ? pwd : "", "isolation",
			      shared ? "shared" : "fresh", "backend", ward_session_backend(s),
			      "timeout", ward_session_default_timeout(s), "shell",
			      ward_session_shell(s));

	/* what the model can count on from one command to the next, and why
	 * the rest is not kept */
	if (o) {
		json_object_set_new(o, "keeps",
				    bash && shared ?
					   json_pack("[s,s,s,s,s,s,s,s]", "directory", "variables",
						     "functions", "aliases", "shell options",
						     "umask", "history", "background jobs") :
				    bash ? json_pack("[s,s,s,s,s,s,s]", "directory", "variables",
						     "functions", "aliases", "shell options",
						     "umask", "history") :
					   json_pack("[s,s,s]", "directory", "environment (API)",
						     "history"));
		json_object_set_new(o, "not_kept",
				    json_string(shared ?
					"processes of a command that timed out or was cancelled (a "
					"cancel ends the sandbox and every job with it)" :
					"processes: every command runs in a sandbox of its own, gone "
					"with the command; nothing it started survives it"));
	}
	free(pwd);
	return o;
}

static int m_create(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	const char *workdir = NULL, *iso = NULL, *cwd = NULL, *oldpwd = NULL, *sh = NULL;
	json_int_t t = 1;
	json_t *env = NULL;
	struct ward_session *s = NULL;
	struct ward_error *w;
	struct entry *g;
	bool shared = false;

	if (params_unpack(params, e, "{s?s, s?s, s?I, s?o, s?s, s?s, s?s}", "workdir", &workdir,
			  "isolation", &iso, "timeout", &t, "env", &env, "cwd", &cwd, "oldpwd",
			  &oldpwd, "shell", &sh) < 0 ||
	    p_range("timeout", t, 1, WARD_TIMEOUT_MAX, e) < 0)
		return -1;
	if (sh && strcmp(sh, "sh") != 0 && strcmp(sh, "bash") != 0)
		return rpc_fail(e, RPC_INVALID_PARAMS, "shell: must be \"sh\" or \"bash\"");
	if (iso && strcmp(iso, "fresh") != 0 && strcmp(iso, "shared") != 0)
		return rpc_fail(e, RPC_INVALID_PARAMS, "isolation: must be \"fresh\" or \"shared\"");
	if (env) {
		const char *k;
		json_t *v;

		if (json_is_string(env)) {
			if (strcmp(json_string_value(env), "host") != 0 &&
			    strcmp(json_string_value(env), "empty") != 0)
				return rpc_fail(e, RPC_INVALID_PARAMS,
						"env: must be \"host\", \"empty\" or an object");
		} else if (json_is_object(env)) {
			json_object_foreach(env, k, v)
				if (!json_is_string(v))
					return rpc_fail(e, RPC_INVALID_PARAMS,
							"env.%s: must be a string, got %s", k,
							ward_json_type_name(v));
		} else {
			return rpc_fail(e, RPC_INVALID_PARAMS,
					"env: must be \"host\", \"empty\" or an object, got %s",
					ward_json_type_name(env));
		}
	}
	pthread_mutex_lock(&sv->lock);
	w = make_session(sv, params, &s, &shared);
	if (w) {
		pthread_mutex_unlock(&sv->lock);
		return rpc_from(e, w);
	}
	g = realloc(sv->sessions, (sv->n_sessions + 1) * sizeof(*g));
	if (!g) {
		pthread_mutex_unlock(&sv->lock);
		ward_session_free(s);
		return rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
	}
	sv->sessions = g;
	g = &sv->sessions[sv->n_sessions++];
	memset(g, 0, sizeof(*g));
	snprintf(g->id, sizeof(g->id), "s%lu", ++sv->next_id);
	g->s = s;
	g->shared = shared;
	sv->sandboxes += shared;
	*result = session_info(g->id, s);
	pthread_mutex_unlock(&sv->lock);
	return 0;
}

static int m_list(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	json_t *a;
	size_t i;

	if (params_unpack(params, e, "{}") < 0)
		return -1;
	a = json_array();
	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->n_sessions; i++)
		json_array_append_new(a, session_info(sv->sessions[i].id, sv->sessions[i].s));
	pthread_mutex_unlock(&sv->lock);
	*result = json_pack("{s:o}", "sessions", a);
	return 0;
}

static int m_close(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	const char *id;
	struct ward_session *s = NULL;
	size_t i;

	if (params_unpack(params, e, "{s:s}", "session", &id) < 0)
		return -1;
	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < sv->n_sessions; i++)
		if (strcmp(sv->sessions[i].id, id) == 0)
			break;
	if (i == sv->n_sessions) {
		pthread_mutex_unlock(&sv->lock);
		return rpc_fail(e, RPC_INVALID_PARAMS, "no session \"%s\"", id);
	}
	while (sv->sessions[i].busy > 0) {
		pthread_cond_wait(&sv->idle, &sv->lock);
		for (i = 0; i < sv->n_sessions; i++)
			if (strcmp(sv->sessions[i].id, id) == 0)
				break;
		if (i == sv->n_sessions) { /* closed meanwhile */
			pthread_mutex_unlock(&sv->lock);
			return rpc_fail(e, RPC_INVALID_PARAMS, "no session \"%s\"", id);
		}
	}
	s = sv->sessions[i].s;
	sv->sandboxes -= sv->sessions[i].shared;
	memmove(sv->sessions + i, sv->sessions + i + 1,
		(sv->n_sessions - i - 1) * sizeof(*sv->sessions));
	sv->n_sessions--;
	pthread_mutex_unlock(&sv->lock);
	ward_session_free(s);
	*result = json_pack("{s:s, s:b}", "session", id, "closed", 1);
	return 0;
}

/* The session result as JSON: the agent tool's result object, plus where the
 * session is and what ran. */
static json_t *exec_result(const char *id, const char *typed, const struct ward_session_result *r)
{
	char *text = ward_result_to_json(&r->run);
	json_t *o = text ? json_loads(text, 0, NULL) : NULL;

	free(text);
	if (!o)
		return NULL;
	json_object_set_new(o, "session", json_string(id));
	json_object_set_new(o, "command", json_string(typed));
	json_object_set_new(o, "expanded", r->expanded ? json_string(r->expanded) : json_null());
	json_object_set_new(o, "history_id",
			    r->history_id ? json_integer((json_int_t)r->history_id) : json_null());
	json_object_set_new(o, "cwd", r->cwd ? json_string(r->cwd) : json_null());
	json_object_set_new(o, "cwd_refused", r->cwd_refused ? json_string(r->cwd_refused) :
							       json_null());
	json_object_set_new(o, "state_note", r->state_note ? json_string(r->state_note) : json_null());
	return o;
}

static bool ask_client(void *ctx, const char *command, const struct ward_verdict *v);

/* What the question to the person needs. */
struct question {
	struct server *sv;
	const char *command;      /* as typed, or NULL (a replay) */
	uint64_t replay;
};

/* MCP progress (2025-06-18): a tools/call whose _meta has a progressToken
 * gets notifications/progress while its command runs — the output so far,
 * its byte count as the progress (which only grows), at most every half
 * second and only when there is more. Set by m_tools_call for the call
 * running on this thread. */
static __thread json_t *progress_token;

/* The longest progress token taken (a string; a number is any JSON
 * integer), and the most output one notification carries. */
#define PROGRESS_TOKEN_MAX 256
#define PROGRESS_TEXT_MAX 8192

struct progress {
	struct server *sv;
	json_t *token;
};

static void send_progress(void *ctx, const struct ward_outbuf *out, const struct ward_outbuf *err)
{
	struct progress *p = ctx;
	size_t len = 0;
	char *text = ward_output_combine(out, err, PROGRESS_TEXT_MAX, &len, NULL);
	json_t *msg;

	if (!text)
		return;
	msg = json_pack("{s:s, s:s, s:{s:O, s:I, s:s%}}", "jsonrpc", "2.0", "method",
			"notifications/progress", "params", "progressToken", p->token, "progress",
			(json_int_t)(ward_outbuf_total(out) + ward_outbuf_total(err)), "message",
			text, len);
	free(text);
	if (msg)
		rpc_emit_nowait(p->sv, msg);
	json_decref(msg);
}

static int run_in(struct server *sv, json_t *params, const char *cmd, uint64_t replay,
		  const struct ward_session_exec_options *eo_in, json_t **result,
		  struct rpc_error *e)
{
	struct ward_session_exec_options eo = { 0 };
	struct question q = { .sv = sv, .command = cmd, .replay = replay };
	struct progress pr = { .sv = sv, .token = progress_token };
	struct ward_session_result r;
	struct ward_error *w = NULL;
	struct entry *en = mcp_take_session(sv, params, e);
	bool counted = false;
	char id[32];
	int rc;

	if (!en)
		return -1;
	memcpy(id, en->id, sizeof(id));
	if (eo_in)
		eo = *eo_in;
	/* A command on the approval list is put to the person through the
	 * client, when it can ask (MCP elicitation); never approved by what the
	 * tool call says. */
	eo.cancel_fd = rpc_current_cancel_fd();
	if (pr.token) {
		eo.progress = send_progress;
		eo.progress_ctx = &pr;
	}
	if (!eo.approved) {
		eo.ask = ask_client;
		eo.ask_ctx = &q;
	}
	/* A fresh session's command is a sandbox alive while it runs. */
	if (ward_session_isolation(en->s) == WARD_SESSION_FRESH &&
	    strcmp(ward_session_backend(en->s), "local") == 0) {
		pthread_mutex_lock(&sv->lock);
		counted = sv->sandboxes < sv->lim.sandboxes;
		sv->sandboxes += counted;
		pthread_mutex_unlock(&sv->lock);
		if (!counted) {
			mcp_give_back(sv, id);
			return rpc_fail(e, RPC_SERVER_ERROR,
					"too many sandboxes: %zu alive, the most allowed (policy "
					"session.limits.sandboxes); try again when one ends",
					sv->lim.sandboxes);
		}
	}
	if (replay)
		rc = ward_session_replay(en->s, replay, &eo, &r, &w);
	else if (cmd)
		rc = ward_session_exec(en->s, cmd, &eo, &r, &w);
	else
		rc = ward_session_cd(en->s, json_string_value(json_object_get(params, "dir")), &r,
				     &w);
	if (counted) {
		pthread_mutex_lock(&sv->lock);
		sv->sandboxes--;
		pthread_mutex_unlock(&sv->lock);
	}
	mcp_give_back(sv, id);
	if (rc < 0)
		return rpc_from(e, w);
	*result = exec_result(id, cmd ? cmd : r.expanded ? r.expanded : "", &r);
	ward_session_result_release(&r);
	return *result ? 0 : rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
}

/* "approved" here is the host program's word: it writes this JSON-RPC
 * request itself. A model's tool call (tools/call) never reaches it: tool
 * arguments are checked against the tool's schema, which has no "approved"
 * (tool_arguments_check). A host must never copy it from a model's words. */
static int exec_options(json_t *params, json_int_t timeout, int concurrent, int approved,
			struct ward_session_exec_options *eo, struct rpc_error *e)
{
	if (json_object_get(params, "timeout") &&
	    p_range("timeout", timeout, 1, WARD_TIMEOUT_MAX, e) < 0)
		return -1;
	eo->timeout = (int)timeout;
	eo->concurrent = concurrent;
	eo->approved = approved;
	return 0;
}

static int m_exec(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	struct ward_session_exec_options eo = { 0 };
	const char *cmd, *session = NULL;
	json_int_t t = 0;
	int concurrent = 0, approved = 0;

	if (params_unpack(params, e, "{s?s, s:s, s?I, s?b, s?b, s?s}", "session", &session,
			  "command", &cmd, "timeout", &t, "concurrent", &concurrent, "approved",
			  &approved, "workdir", &eo.workdir) < 0 ||
	    exec_options(params, t, concurrent, approved, &eo, e) < 0)
		return -1;
	return run_in(sv, params, cmd, 0, &eo, result, e);
}

static int m_replay(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	struct ward_session_exec_options eo = { 0 };
	const char *session = NULL;
	json_int_t id, t = 0;
	int concurrent = 0, approved = 0;

	if (params_unpack(params, e, "{s?s, s:I, s?I, s?b, s?b}", "session", &session, "id", &id,
			  "timeout", &t, "concurrent", &concurrent, "approved", &approved) < 0 ||
	    p_range("id", id, 1, LLONG_MAX, e) < 0 ||
	    exec_options(params, t, concurrent, approved, &eo, e) < 0)
		return -1;
	return run_in(sv, params, NULL, (uint64_t)id, &eo, result, e);
}

static int m_cd(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	const char *dir, *session = NULL;

	if (params_unpack(params, e, "{s?s, s:s}", "session", &session, "dir", &dir) < 0)
		return -1;
	return run_in(sv, params, NULL, 0, NULL, result, e);
}

/* The methods that only read or change state: one function, one switch. */
enum simple { S_PWD, S_ENV_SET, S_ENV_UNSET, S_ENV_LIST, S_ALIAS_SET, S_ALIAS_REMOVE,
	      S_ALIAS_LIST, S_HISTORY, S_CHANGES, S_DIFF, S_APPLY, S_DISCARD };

static json_t *text_json(const char *s, size_t len)
{
	size_t n;
	char *clean = ward_utf8_sanitize(s, len, &n);
	json_t *v = clean ? json_stringn(clean, n) : NULL;

	free(clean);
	return v ? v : json_string("");
}

/* The session's change set: {"name", "count", "entries_omitted", "entries"},
 * or {"name": null, "count": 0} when it has none; with "diff" (text) when
 * asked. */
static int changes_object(struct ward_session *s, bool diff, json_t **out,
			  struct ward_error **err)
{
	static const char *const kinds[] = { "added", "modified", "deleted", "mode", "replaced" };
	static const char *const types[] = { "none", "file", "dir", "symlink", "other" };
	struct ward_changeset *cs = ward_session_changes(s, err);
	json_t *o, *list;
	size_t n, i;

	if (!cs) {
		if (*err)
			return -1;
		*out = json_pack("{s:n, s:i, s:i, s:[]}", "name", "count", 0, "entries_omitted", 0,
				 "entries");
		if (*out && diff)
			json_object_set_new(*out, "diff", json_string(""));
		return 0;
	}
	n = ward_changeset_count(cs);
	list = json_array();
	for (i = 0; i < n && i < WARD_RESULT_MAX_CHANGES; i++) {
		const struct ward_change *c = ward_changeset_get(cs, i);
		json_t *e = json_object();

		json_object_set_new(e, "path", text_json(c->path, strlen(c->path)));
		json_object_set_new(e, "change", json_string(kinds[c->kind]));
		json_object_set_new(e, "type", json_string(types[c->type]));
		if (c->size >= 0)
			json_object_set_new(e, "size", json_integer(c->size));
		if (c->old_size >= 0)
			json_object_set_new(e, "old_size", json_integer(c->old_size));
		if (c->target)
			json_object_set_new(e, "target", text_json(c->target, strlen(c->target)));
		if (c->warn) {
			json_t *wl = json_array();

			for (unsigned bit = 1; bit; bit <<= 1)
				if ((c->warn & bit) && ward_change_warning_name(bit))
					json_array_append_new(wl,
							      json_string(ward_change_warning_name(bit)));
			json_object_set_new(e, "warnings", wl);
		}
		json_array_append_new(list, e);
	}
	o = json_object();
	json_object_set_new(o, "name", json_string(ward_changeset_name(cs)));
	json_object_set_new(o, "count", json_integer((json_int_t)n));
	json_object_set_new(o, "entries_omitted",
			    json_integer(n > WARD_RESULT_MAX_CHANGES ?
						 (json_int_t)(n - WARD_RESULT_MAX_CHANGES) : 0));
	json_object_set_new(o, "entries", list);
	if (diff) {
		int fd = memfd_create("ward-diff", MFD_CLOEXEC);
		char *text = NULL;
		size_t len = 0;
		int rc = fd < 0 ? ward_error_make(err, errno, "memfd_create") :
				  ward_changeset_diff(cs, fd, err);

		if (rc == 0) {
			off_t size = lseek(fd, 0, SEEK_END);

			text = size >= 0 ? malloc((size_t)size + 1) : NULL;
			if (text && pread(fd, text, (size_t)size, 0) == size)
				len = (size_t)size;
			else
				rc = ward_error_make(err, errno ? errno : ENOMEM, "read the diff");
		}
		if (fd >= 0)
			close(fd);
		if (rc < 0) {
			free(text);
			json_decref(o);
			ward_changeset_free(cs);
			return -1;
		}
		json_object_set_new(o, "diff", text_json(text, len));
		free(text);
	}
	ward_changeset_free(cs);
	*out = o;
	return 0;
}

static int simple(struct server *sv, enum simple what, json_t *params, json_t **result,
		  struct rpc_error *e)
{
	const char *name = NULL, *value = NULL, *prefix = NULL, *contains = NULL, *sid = NULL;
	json_int_t limit = 0;
	int force = 0;
	struct ward_error *w = NULL;
	struct entry *en;
	char id[32];
	int rc = 0;

	/* each kind's parameters, "session" with all */
	if (what == S_ENV_SET || what == S_ALIAS_SET)
		rc = params_unpack(params, e, "{s?s, s:s, s:s}", "session", &sid, "name", &name,
				   "value", &value);
	else if (what == S_ENV_UNSET || what == S_ALIAS_REMOVE)
		rc = params_unpack(params, e, "{s?s, s:s}", "session", &sid, "name", &name);
	else if (what == S_HISTORY)
		rc = params_unpack(params, e, "{s?s, s?s, s?s, s?I}", "session", &sid, "prefix",
				   &prefix, "contains", &contains, "limit", &limit);
	else if (what == S_APPLY)
		rc = params_unpack(params, e, "{s?s, s?b}", "session", &sid, "force", &force);
	else
		rc = params_unpack(params, e, "{s?s}", "session", &sid);
	if (rc < 0 || p_range("limit", limit, 0, INT_MAX, e) < 0)
		return -1;
	if (prefix && contains)
		return rpc_fail(e, RPC_INVALID_PARAMS, "give \"prefix\" or \"contains\", not both");
	en = mcp_take_session(sv, params, e);
	if (!en)
		return -1;
	memcpy(id, en->id, sizeof(id));
	switch (what) {
	case S_PWD: {
		char *p = ward_session_pwd(en->s);

		*result = json_pack("{s:s, s:s?}", "session", id, "cwd", p);
		free(p);
		break;
	}
	case S_ENV_SET:
		rc = ward_session_setenv(en->s, name, value, &w);
		break;
	case S_ENV_UNSET:
		rc = ward_session_unsetenv(en->s, name, &w);
		break;
	case S_ALIAS_SET:
		rc = ward_session_alias_set(en->s, name, value, &w);
		break;
	case S_ALIAS_REMOVE:
		rc = ward_session_alias_remove(en->s, name, &w);
		break;
	case S_ENV_LIST:
	case S_ALIAS_LIST: {
		char **v = what == S_ENV_LIST ? ward_session_env(en->s) : ward_session_aliases(en->s);

		*result = json_pack("{s:s, s:o}", "session", id,
				    what == S_ENV_LIST ? "env" : "aliases", strv_object(v));
		ward_env_free(v);
		break;
	}
	case S_HISTORY: {
		struct ward_history_entry *h = NULL;
		size_t n = 0, i, bytes = 0, omitted = 0;
		json_t *a;

		rc = ward_session_history(en->s,
					  prefix     ? WARD_HISTORY_PREFIX :
					  contains   ? WARD_HISTORY_SUBSTRING :
						       WARD_HISTORY_ALL,
					  prefix ? prefix : contains, (size_t)limit, &h, &n, &w);
		if (rc < 0)
			break;
		/* The answer is capped at half a response: the most recent entries
		 * that fit, and how many were left out. */
		a = json_array();
		for (i = n; i-- > 0;) {
			json_t *o = json_pack(
				"{s:I, s:s, s:s, s:i, s:I, s:I, s:s?, s:s, s:o}", "id",
				(json_int_t)h[i].id, "command", h[i].command, "expanded",
				h[i].expanded, "exit_code", h[i].exit_code, "start_ms",
				(json_int_t)h[i].start_ms, "duration_ms",
				(json_int_t)h[i].duration_ms, "error", h[i].error_kind, "cwd",
				h[i].cwd, "replay_of",
				h[i].replay_of ? json_integer((json_int_t)h[i].replay_of) :
						 json_null());
			size_t size = o ? json_dumpb(o, NULL, 0, JSON_COMPACT) : 0;

			if (!o || bytes + size > sv->lim.response_bytes / 2) {
				json_decref(o);
				omitted = i + 1;
				break;
			}
			bytes += size;
			json_array_insert_new(a, 0, o);
		}
		ward_history_free(h, n);
		*result = json_pack("{s:s, s:o, s:I}", "session", id, "history", a, "omitted",
				    (json_int_t)omitted);
		break;
	}
	case S_CHANGES:
	case S_DIFF: {
		json_t *c = NULL;

		rc = changes_object(en->s, what == S_DIFF, &c, &w);
		if (rc == 0)
			*result = json_pack("{s:s, s:o}", "session", id, "changes", c);
		break;
	}
	case S_APPLY:
		rc = ward_session_changes_apply(en->s, force, &w);
		break;
	case S_DISCARD:
		rc = ward_session_changes_discard(en->s, &w);
		break;
	}
	mcp_give_back(sv, id);
	if (rc < 0)
		return rpc_from(e, w);
	if (!*result)
		*result = json_pack("{s:s, s:b}", "session", id, "ok", 1);
	return 0;
}

#define SIMPLE(fn, what)                                                                           \
	static int fn(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)     \
	{                                                                                          \
		return simple(sv, what, params, result, e);                                        \
	}
SIMPLE(m_pwd, S_PWD)
SIMPLE(m_env_set, S_ENV_SET)
SIMPLE(m_env_unset, S_ENV_UNSET)
SIMPLE(m_env_list, S_ENV_LIST)
SIMPLE(m_alias_set, S_ALIAS_SET)
SIMPLE(m_alias_remove, S_ALIAS_REMOVE)
SIMPLE(m_alias_list, S_ALIAS_LIST)
SIMPLE(m_history, S_HISTORY)
SIMPLE(m_changes, S_CHANGES)
SIMPLE(m_changes_diff, S_DIFF)
SIMPLE(m_changes_apply, S_APPLY)
SIMPLE(m_changes_discard, S_DISCARD)

/* ---- approval through the client (MCP elicitation) --------------------------------- */

/* A command as a person should see it in a question: control characters
 * shown as \xNN, at most 2000 bytes. malloc'd. */
static char *shown(const char *text)
{
	size_t n = strlen(text), i, o = 0, max = 2000;
	char *out = malloc(max * 4 + 16);

	if (!out)
		return NULL;
	for (i = 0; i < n && o < max * 4; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c < 0x20 || c == 0x7f)
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		else
			out[o++] = (char)c;
		if (i + 1 == max) {
			o += (size_t)sprintf(out + o, " [...]");
			break;
		}
	}
	out[o] = '\0';
	return out;
}

/* Put a question to the person through the client (elicitation/create)
 * and wait, bounded by session.limits.approval_timeout, for the answer.
 * True only on explicit acceptance: action "accept" with "approve": true.
 * No capability, decline, cancel, an error response, no answer in time, the
 * client gone, the server stopping: false. Runs on the main thread or a
 * request's; the reader thread routes the answer. */
static bool ask_person(struct server *sv, const char *message, const char *title,
		       const char *description)
{
	struct pending *p = NULL;
	char idbuf[48];
	struct timespec deadline;
	json_t *req;
	bool ok;
	size_t i;

	if (!sv->elicit || sv->stopping)
		return false;
	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < PENDING_MAX && !p; i++)
		if (sv->pending[i].id == 0)
			p = &sv->pending[i];
	if (p) {
		p->id = ++sv->next_question;
		p->answered = p->accepted = false;
		snprintf(idbuf, sizeof(idbuf), "ward-approval-%lu", p->id);
	}
	pthread_mutex_unlock(&sv->lock);
	if (!p)
		return false; /* too many questions open at once */

	req = json_pack("{s:s, s:s, s:s, s:{s:s, s:{s:s, s:{s:{s:s, s:s, s:s, s:b}}, s:[s]}}}",
			"jsonrpc", "2.0", "id", idbuf, "method", "elicitation/create", "params",
			"message", message, "requestedSchema", "type", "object", "properties",
			"approve", "type", "boolean", "title", title, "description", description,
			"default", 0, "required", "approve");
	if (req) {
		rpc_emit(sv, req);
		json_decref(req);
	}

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += sv->lim.approval_timeout;
	pthread_mutex_lock(&sv->lock);
	while (req && !p->answered && !sv->stopping && !sv->in_eof)
		if (pthread_cond_timedwait(&sv->answer_cond, &sv->lock, &deadline) == ETIMEDOUT)
			break;
	ok = p->answered && p->accepted && !sv->stopping;
	p->id = 0;
	pthread_mutex_unlock(&sv->lock);
	return ok;
}

/* The session's ask callback: a command on the approval list, put to the
 * person as it will run; refused with ApprovalRequired unless accepted. */
static bool ask_client(void *ctx, const char *command, const struct ward_verdict *v)
{
	struct question *q = ctx;
	_cleanup_free_ char *cmd = NULL, *typed = NULL, *how = NULL, *message = NULL;

	if (!q->sv->elicit || q->sv->stopping)
		return false;
	/* What will run, aliases expanded: the person decides on that, not
	 * on an alias's name or a history number the model chose. */
	cmd = shown(command);
	if (q->command && strcmp(q->command, command) != 0) {
		typed = shown(q->command);
		if (typed && asprintf(&how, "\n(typed as: %s)", typed) < 0)
			how = NULL;
	} else if (!q->command &&
		   asprintf(&how, "\n(a replay of history entry %llu)",
			    (unsigned long long)q->replay) < 0) {
		how = NULL;
	}
	if (!cmd || asprintf(&message,
			     "ward: a command needs your approval before it runs.\n\n"
			     "Command: %s%s\n"
			     "Why: %s (rule %s: %s)\n\n"
			     "Approve only if you want this to run; the model cannot approve it.",
			     cmd, how ? how : "", v->category ? v->category : "approval list",
			     v->rule ? v->rule : "?", v->words ? v->words : "") < 0)
		return false;
	return ask_person(q->sv, message, "Run this command", "Yes runs it once; no refuses it.");
}

/* The changes a set holds, for a question: "N changes: a (added), b
 * (modified), ..." with at most 20 named, each escaped. malloc'd. */
static char *changes_told(struct ward_changeset *cs)
{
	static const char *const kinds[] = { "added", "modified", "deleted", "mode", "replaced" };
	size_t n = ward_changeset_count(cs), size = 0;
	char *text = NULL;
	FILE *m = open_memstream(&text, &size);

	if (!m)
		return NULL;
	fprintf(m, "%zu change%s:", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n && i < 20; i++) {
		const struct ward_change *c = ward_changeset_get(cs, i);
		_cleanup_free_ char *path = shown(c->path), *target = NULL;

		if (c->target)
			target = shown(c->target);
		fprintf(m, "\n  %s (%s%s%s)", path ? path : "?", kinds[c->kind],
			target ? ", a link to " : "", target ? target : "");
	}
	if (n > 20)
		fprintf(m, "\n  and %zu more", n - 20);
	fclose(m);
	return text;
}

/* The changes_apply tool: the model asks to copy what its commands changed
 * into the real workdir. Overlay mode holds the writes aside so that the
 * person reviews them; so the person decides, through the client, on the
 * changes as they are now, and the set is applied only if it is still that
 * set (the same count and names) once they accept, never over files edited
 * meanwhile (the model cannot force). Without elicitation: refused. */
static int tool_apply(struct server *sv, json_t *args, json_t **result, struct rpc_error *e)
{
	struct ward_error *w = NULL;
	_cleanup_free_ char *told = NULL, *again = NULL, *message = NULL;
	struct ward_changeset *cs;
	struct entry *en;
	char id[32];
	int rc = -1;

	en = mcp_take_session(sv, args, e);
	if (!en)
		return -1;
	memcpy(id, en->id, sizeof(id));
	cs = ward_session_changes(en->s, &w);
	if (!cs) {
		mcp_give_back(sv, id);
		if (w)
			return rpc_from(e, w);
		return rpc_fail(e, RPC_INVALID_PARAMS, "no changes to apply (overlay workdir mode "
						       "holds none for this session)");
	}
	told = changes_told(cs);
	ward_changeset_free(cs);
	if (!told || asprintf(&message,
			      "ward: the model asks to apply the session's changes to the real "
			      "workdir.\n\n%s\n\nApply only if you have reviewed them (the "
			      "changes_diff tool shows them); the model cannot apply them itself.",
			      told) < 0) {
		mcp_give_back(sv, id);
		return rpc_fail(e, RPC_INTERNAL_ERROR, "out of memory");
	}
	if (!ask_person(sv, message, "Apply these changes", "Yes applies them; no keeps them.")) {
		mcp_give_back(sv, id);
		return rpc_fail(e, RPC_SERVER_ERROR,
				"ApprovalRequired: applying changes to the workdir is the person's "
				"decision: %s (the client must support MCP elicitation); the changes "
				"are kept",
				sv->elicit ? "they did not accept" : "the client cannot ask them");
	}
	/* the set the person saw, not one a running command has grown since */
	cs = ward_session_changes(en->s, &w);
	again = cs ? changes_told(cs) : NULL;
	ward_changeset_free(cs);
	if (!again || strcmp(again, told) != 0) {
		mcp_give_back(sv, id);
		if (w)
			return rpc_from(e, w);
		return rpc_fail(e, RPC_SERVER_ERROR, "the changes changed while the person was "
						     "asked; nothing applied, ask again");
	}
	rc = ward_session_changes_apply(en->s, false, &w);
	mcp_give_back(sv, id);
	if (rc < 0)
		return rpc_from(e, w);
	*result = json_pack("{s:s, s:b}", "session", id, "ok", 1);
	return 0;
}

/* ---- the table: JSON-RPC names to functions; the tools are data ------------------- */

static const struct method {
	const char *name; /* JSON-RPC method, and a tool's "method" in mcp-tools.json */
	method_fn fn;
} methods[] = {
	{ "session.exec", m_exec },
	{ "session.create", m_create },
	{ "session.list", m_list },
	{ "session.close", m_close },
	{ "session.env.set", m_env_set },
	{ "session.env.unset", m_env_unset },
	{ "session.env.list", m_env_list },
	{ "session.alias.set", m_alias_set },
	{ "session.alias.remove", m_alias_remove },
	{ "session.alias.list", m_alias_list },
	{ "session.cd", m_cd },
	{ "session.pwd", m_pwd },
	{ "session.history.search", m_history },
	{ "session.history.replay", m_replay },
	{ "session.changes", m_changes },
	{ "session.changes.diff", m_changes_diff },
	{ "session.changes.apply", m_changes_apply },
	{ "session.changes.discard", m_changes_discard },
};

static json_t *tools_doc;
static pthread_once_t tools_once = PTHREAD_ONCE_INIT;

static void tools_load(void)
{
	tools_doc = json_loads(ward_mcp_tools_json, JSON_REJECT_DUPLICATES, NULL);
}

json_t *mcp_tools(void)
{
	pthread_once(&tools_once, tools_load);
	return tools_doc;
}

static const struct method *find_method(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(methods); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}

/* The tool of that name in mcp-tools.json, or NULL. */
static json_t *find_tool(const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(mcp_tools(), "tools"), i, t)
		if (json_is_string(json_object_get(t, "name")) &&
		    strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
			return t;
	return NULL;
}

/* ---- MCP ----------------------------------------------------------------------------- */

static const char *const mcp_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05" };

/* What the model is told the sandbox allows: the network, the workdir, the
 * timeout, what a session keeps — from the policy and the flags, as a new
 * session would get them. */
static char *sandbox_instructions(struct server *sv)
{
	struct ward_config cfg;
	struct ward_session_options opt;
	struct ward_error *err = NULL;
	char *out = NULL, hosts[1024] = "", here[PATH_MAX];
	const char *net;
	size_t i, len = 0;

	ward_config_init(&cfg);
	ward_session_options_init(&opt);
	if (serve_config(sv->o, &cfg, &err) < 0 ||
	    ward_session_options_from_config(&cfg, &opt, &err) < 0) {
		ward_error_free(err);
		ward_config_release(&cfg);
		ward_session_options_release(&opt);
		return NULL;
	}
	serve_session_defaults(sv->o, &opt);
	for (i = 0; i < cfg.netpolicy.n_allow && len + 2 < sizeof(hosts); i++) {
		int n = snprintf(hosts + len, sizeof(hosts) - len, "%s%s", i ? ", " : "",
				 cfg.netpolicy.allow[i].text);

		if (n < 0 || (size_t)n >= sizeof(hosts) - len)
			break;
		len += (size_t)n;
	}
	if (cfg.mode == WARD_SANDBOX_OFF)
		net = "the host's network (the sandbox is off)";
	else if (cfg.net == WARD_NET_HOST)
		net = "the host's network";
	else if (cfg.net == WARD_NET_PROXY)
		net = "only HTTP(S) through ward's proxy, to these hosts:";
	else
		net = "none (loopback only)";
	if (asprintf(&out,
		     "Each shell command runs in a sandbox%s. Network: %s%s%s. Workdir: %s "
		     "(%s mode: %s); the rest of the file system is read-only, HOME is /tmp "
		     "unless the host's is visible. A command times out after %d s by default "
		     "(the shell tool's timeout argument changes it). A session is a shell kept "
		     "open (%s isolation): variables, functions, shell options, umask, aliases and "
		     "the directory carry over to the next command; %s. Some commands are refused "
		     "or need a person's approval.",
		     cfg.mode == WARD_SANDBOX_OFF ? " (off: no isolation)" : "", net,
		     cfg.net == WARD_NET_PROXY && cfg.mode != WARD_SANDBOX_OFF ? " " : "",
		     cfg.net == WARD_NET_PROXY && cfg.mode != WARD_SANDBOX_OFF ?
			     (hosts[0] ? hosts : "none") : "",
		     cfg.workdir ? cfg.workdir : getcwd(here, sizeof(here)) ? here : "the current directory",
		     ward_workdir_mode_name(cfg.workdir_mode),
		     cfg.workdir_mode == WARD_WORKDIR_OVERLAY ?
			     "writes are kept as a change set a person applies" :
			     "writes go to the directory itself",
		     opt.timeout, opt.isolation == WARD_SESSION_SHARED ? "shared" : "fresh",
		     opt.isolation == WARD_SESSION_SHARED ?
			     "so do background jobs (a server started with & is reached by later "
			     "commands; jobs and kill %N work on them) until the session closes" :
			     "processes do not (a server started with & ends with its command)") < 0)
		out = NULL;
	ward_config_release(&cfg);
	ward_session_options_release(&opt);
	return out;
}

static int m_initialize(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	char *instr;
	const char *want = json_string_value(json_object_get(params, "protocolVersion"));
	const char *v = mcp_versions[0];
	json_t *caps = json_object_get(params, "capabilities");
	size_t i;

	(void)e;
	/* The client can put a question to the person (elicitation/create):
	 * the only way a command on the approval list runs over MCP. */
	sv->elicit = json_is_object(json_object_get(caps, "elicitation"));
	for (i = 0; want && i < ARRAY_SIZE(mcp_versions); i++)
		if (strcmp(want, mcp_versions[i]) == 0)
			v = mcp_versions[i];
	instr = sandbox_instructions(sv);
	*result = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}", "protocolVersion", v,
			    "capabilities", "tools", "listChanged", 0, "serverInfo", "name", "ward",
			    "version", WARD_VERSION, "instructions",
			    instr ? instr : "Each tool runs in a sandbox; a session is a shell kept "
					    "open across commands.");
	free(instr);
	return 0;
}

static int m_tools_list(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	json_t *list = json_object_get(mcp_tools(), "tools"), *tools, *t;
	size_t i;

	(void)params;
	if (!json_is_array(list))
		return rpc_fail(e, RPC_INTERNAL_ERROR, "the built-in tool list does not parse");
	tools = json_array();
	json_array_foreach(list, i, t) {
		json_t *o = json_pack("{s:O, s:O, s:O}", "name", json_object_get(t, "name"),
				      "description", json_object_get(t, "description"),
				      "inputSchema", json_object_get(t, "inputSchema"));
		const char *desc = json_string_value(json_object_get(t, "description"));
		const char *gen = "bash where installed (else sh)";
		char *said = NULL;

		/* the shell tool names the shell this server's sessions run */
		if (o && desc && strstr(desc, gen)) {
			struct ward_session_options opt;
			const char *at = strstr(desc, gen);

			ward_session_options_init(&opt);
			serve_session_defaults(sv->o, &opt);
			if (asprintf(&said, "%.*s%s -c (the validators read each command as %s does)%s",
				     (int)(at - desc), desc, ward_session_options_shell(&opt),
				     strcmp(ward_session_options_shell(&opt), "/bin/bash") == 0 ? "bash" : "sh",
				     at + strlen(gen)) >= 0)
				json_object_set_new(o, "description", json_string(said));
			free(said);
			ward_session_options_release(&opt);
		}

		/* what structuredContent holds (MCP 2025-06-18) */
		if (o && json_object_get(t, "outputSchema"))
			json_object_set(o, "outputSchema", json_object_get(t, "outputSchema"));
		json_array_append_new(tools, o);
	}
	*result = json_pack("{s:o}", "tools", tools);
	return 0;
}

/* The text a person reads of a tool result. */
static char *tool_text(json_t *r)
{
	json_t *out = json_object_get(r, "output"), *err = json_object_get(r, "error");
	char *s = NULL;

	if (json_is_string(out)) {
		const char *msg = json_string_value(json_object_get(err, "message"));
		const char *kind = json_string_value(json_object_get(err, "kind"));

		if (asprintf(&s, "%s%s%s%s%s%s[exit code %lld]", json_string_value(out),
			     json_string_length(out) && json_string_value(out)[json_string_length(out) - 1] != '\n' ? "\n" : "",
			     kind ? kind : "", kind ? ": " : "", msg ? msg : "", msg ? "\n" : "",
			     (long long)json_integer_value(json_object_get(r, "exit_code"))) < 0)
			s = NULL;
		return s;
	}
	return json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

static int tool_arguments_check(json_t *tool, const char *name, json_t *args,
				struct rpc_error *e)
{
	json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
	const char *k;
	json_t *v;
	int rc = 0;

	json_object_foreach(args, k, v) {
		if (json_object_get(props, k))
			continue;
		if (strcmp(k, "approved") == 0)
			rc = rpc_fail(e, RPC_INVALID_PARAMS,
				      "ApprovalRequired: tool \"%s\" takes no \"approved\": a tool "
				      "call cannot approve a command; the person does, when the "
				      "client asks them (MCP elicitation)", name);
		else
			rc = rpc_fail(e, RPC_INVALID_PARAMS, "tool \"%s\" has no argument \"%s\"",
				      name, k);
		break;
	}
	return rc;
}

static int m_tools_call(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	const char *name;
	json_t *args = NULL, *meta = NULL, *r = NULL, *token;
	const struct method *m = NULL;
	int rc;
	struct rpc_error te = { 0 };
	json_t *tool;
	char *text;
	bool is_error;

	if (params_unpack(params, e, "{s:s, s?o, s?o}", "name", &name, "arguments", &args, "_meta",
			  &meta) < 0)
		return -1;
	if (args && !json_is_object(args))
		return rpc_fail(e, RPC_INVALID_PARAMS, "arguments: must be an object, got %s",
				ward_json_type_name(args));
	tool = find_tool(name);
	if (tool)
		m = find_method(json_string_value(json_object_get(tool, "method")));
	if (!m)
		return rpc_fail(e, RPC_INVALID_PARAMS, "unknown tool \"%s\"", name);
	/* a progress token is a string or a number (MCP); anything else, or a
	 * string past PROGRESS_TOKEN_MAX bytes, is the client's mistake */
	if (meta && !json_is_object(meta))
		return rpc_fail(e, RPC_INVALID_PARAMS, "_meta: must be an object, got %s",
				ward_json_type_name(meta));
	token = meta ? json_object_get(meta, "progressToken") : NULL;
	if (token && !json_is_integer(token) &&
	    !(json_is_string(token) && json_string_length(token) <= PROGRESS_TOKEN_MAX))
		return rpc_fail(e, RPC_INVALID_PARAMS,
				"_meta.progressToken: must be an integer or a string of at most %d "
				"bytes, got %s",
				PROGRESS_TOKEN_MAX,
				json_is_string(token) ? "a longer string" : ward_json_type_name(token));
	if (!args)
		args = json_object();
	else
		json_incref(args);
	/* A tool takes exactly what its schema lists. The arguments are the
	 * model's words: "approved" (which the JSON-RPC method takes from the
	 * host program) is refused by name, and nothing runs. */
	if (tool_arguments_check(tool, name, args, &te) < 0) {
		json_decref(args);
		*result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
				    te.message, "isError", 1);
		return 0;
	}
	/* A tool's failure is the tool's result (isError), so the model sees it.
	 * Applying changes is the person's word, not the model's (tool_apply). */
	progress_token = token;
	rc = strcmp(m->name, "session.changes.apply") == 0 ? tool_apply(sv, args, &r, &te) :
							     m->fn(sv, args, &r, &te);
	progress_token = NULL;
	if (rc < 0) {
		json_decref(args);
		*result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
				    te.message, "isError", 1);
		return 0;
	}
	json_decref(args);
	text = tool_text(r);
	/* A command that failed is an error result for the model to see; the
	 * methods that are not commands have no "success". */
	is_error = json_is_false(json_object_get(r, "success"));
	*result = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
			    text ? text : "", "structuredContent", r, "isError", is_error);
	free(text);
	return 0;
}

static int m_ping(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	(void)sv;
	(void)params;
	(void)e;
	*result = json_object();
	return 0;
}

static const struct {
	const char *name;
	method_fn fn;
} protocol[] = {
	{ "initialize", m_initialize },
	{ "tools/list", m_tools_list },
	{ "tools/call", m_tools_call },
	{ "ping", m_ping },
	{ "notifications/initialized", m_ping }, /* nothing to do: tools are ready */
	{ "notifications/cancelled", m_ping },   /* commands run to their own timeout */
};

method_fn mcp_resolve(const char *method, struct rpc_error *e)
{
	const struct method *m = find_method(method);
	size_t i;

	if (m)
		return m->fn;
	for (i = 0; i < ARRAY_SIZE(protocol); i++)
		if (strcmp(protocol[i].name, method) == 0)
			return protocol[i].fn;
	rpc_fail(e, RPC_METHOD_NOT_FOUND, "method not found: \"%s\"", method);
	return NULL;
}


void mcp_close_all(struct server *sv)
{
	size_t i;

	for (i = 0; i < sv->n_sessions; i++)
		ward_session_free(sv->sessions[i].s);
	sv->n_sessions = 0;
	free(sv->sessions);
	sv->sessions = NULL;
}
