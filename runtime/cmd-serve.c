/* cmd-serve.c — `ward serve`: sessions over JSON-RPC 2.0 on stdio, one message
 * per line, and the same as a Model Context Protocol server (initialize,
 * tools/list, tools/call), since that is how agent hosts attach tools.
 *
 * The server never dies of its input: malformed JSON, unknown methods, wrong
 * parameter types and over-long lines are answered with JSON-RPC errors and
 * the sessions stay. A command's own failure (refused, timed out) is not a
 * JSON-RPC error but a result with "error", as `ward run --json` gives it. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "runtime/cli-internal.h"
#include "runtime/jschema-internal.h"
#include "runtime/serve-internal.h"
#include "runtime/util-internal.h"
#include "ward/env.h"
#include "ward/policy.h"
#include "ward/request.h"
#include "ward/session.h"
#include "ward/workdir.h"

#define WARD_VERSION "0.1.0"

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR -32700
#define RPC_INVALID_REQUEST -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS -32602
#define RPC_INTERNAL_ERROR -32603
#define RPC_SERVER_ERROR -32000 /* a session could not be made, and the like */

struct entry {
	char id[32];
	struct ward_session *s;
	int busy;                 /* requests using it right now */
	bool shared;              /* it holds a sandbox of its own (counted) */
};

/* An elicitation (MCP): a question put to the person through the client,
 * waiting for the client's response with the same id. */
#define PENDING_MAX 16
struct pending {
	unsigned long id;         /* 0: free */
	bool answered, accepted;
};

/* One line of output waiting for the writer thread. */
struct outmsg {
	struct outmsg *next;
	size_t len;
	char data[];
};

/* One message read, waiting for the main thread. */
struct inmsg {
	struct inmsg *next;
	json_t *msg;
	size_t len;
};

/* Requests read ahead of the main thread: at most this many bytes (a full
 * queue stops the reader, so a flooding client is held back by its pipe). */
#define INQ_BYTES_MAX (2 * WARD_SERVE_LINE_MAX)

struct server {
	pthread_mutex_t lock;     /* sessions, threads, sandboxes, pending */
	pthread_cond_t idle;
	struct entry *sessions;
	size_t n_sessions;
	unsigned long next_id;
	int threads;              /* concurrent requests still running */
	size_t sandboxes;         /* shared sessions + fresh commands running */
	/* One rate limit for every session of the server: the user's. */
	struct ward_ratelog ratelog;
	pthread_mutex_t rate_lock;
	unsigned rate_per_minute, rate_per_hour;
	struct ward_session_limits lim;
	const struct serve_options *o;

	/* Stopping (SIGTERM, SIGINT, SIGHUP): set by the watcher thread, then
	 * every wait below is woken; cancel_fd (an eventfd, written once, never
	 * read) kills every command's sandbox (ward_config.cancel_fd). */
	volatile bool stopping;
	int cancel_fd;

	/* Output: a bounded queue the writer thread empties, so that a client
	 * that stops reading stalls the writer, never the signal handling. */
	pthread_mutex_t out_lock;
	pthread_cond_t out_cond;
	struct outmsg *oq_head, *oq_tail;
	size_t oq_bytes;
	bool writing, writer_exit, out_broken;
	int out_fd;

	/* Input: the reader thread parses lines, routes responses to pending
	 * questions, queues the rest for the main thread. */
	pthread_mutex_t in_lock;
	pthread_cond_t in_cond;
	struct inmsg *iq_head, *iq_tail;
	size_t iq_bytes;
	bool in_eof;
	int in_fd;

	/* MCP elicitation */
	bool elicit;              /* the client declared the capability */
	struct pending pending[PENDING_MAX];
	unsigned long next_question;
	pthread_cond_t answer_cond;
};

/* ---- errors ---------------------------------------------------------------- */

struct rpc_error {
	int code;
	char message[WARD_ERROR_MESSAGE_MAX + 64];
	const char *kind;         /* data.kind, when a ward error */
};

static int rpc_fail(struct rpc_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rpc_fail(struct rpc_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -1;
}

/* A ward error as an RPC error: bad input is the caller's, the rest ours. */
static int rpc_from(struct rpc_error *e, struct ward_error *w)
{
	e->code = w && w->kind == WARD_ERR_INVALID_PARAMETERS ? RPC_INVALID_PARAMS :
								  RPC_SERVER_ERROR;
	snprintf(e->message, sizeof(e->message), "%s", w ? w->message : "out of memory");
	e->kind = w ? ward_error_kind_name(w->kind) : NULL;
	ward_error_free(w);
	return -1;
}

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
	const char *workdir = NULL, *iso = NULL, *cwd = NULL, *oldpwd = NULL;
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
static struct entry *take_session(struct server *sv, json_t *params, struct rpc_error *e)
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
static void give_back(struct server *sv, const char *id)
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
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "session", id, "workdir",
			      ward_session_workdir(s), "cwd", pwd ? pwd : "", "isolation",
			      ward_session_isolation(s) == WARD_SESSION_SHARED ? "shared" : "fresh",
			      "backend", ward_session_backend(s), "timeout",
			      ward_session_default_timeout(s));

	free(pwd);
	return o;
}

static int m_create(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	const char *workdir = NULL, *iso = NULL, *cwd = NULL, *oldpwd = NULL;
	json_int_t t = 1;
	json_t *env = NULL;
	struct ward_session *s = NULL;
	struct ward_error *w;
	struct entry *g;
	bool shared = false;

	if (params_unpack(params, e, "{s?s, s?s, s?I, s?o, s?s, s?s}", "workdir", &workdir,
			  "isolation", &iso, "timeout", &t, "env", &env, "cwd", &cwd, "oldpwd",
			  &oldpwd) < 0 ||
	    p_range("timeout", t, 1, WARD_TIMEOUT_MAX, e) < 0)
		return -1;
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
	return o;
}

static bool ask_client(void *ctx, const char *command, const struct ward_verdict *v);

/* What the question to the person needs. */
struct question {
	struct server *sv;
	const char *command;      /* as typed, or NULL (a replay) */
	uint64_t replay;
};

static int run_in(struct server *sv, json_t *params, const char *cmd, uint64_t replay,
		  const struct ward_session_exec_options *eo_in, json_t **result,
		  struct rpc_error *e)
{
	struct ward_session_exec_options eo = { 0 };
	struct question q = { .sv = sv, .command = cmd, .replay = replay };
	struct ward_session_result r;
	struct ward_error *w = NULL;
	struct entry *en = take_session(sv, params, e);
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
			give_back(sv, id);
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
	give_back(sv, id);
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
	en = take_session(sv, params, e);
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
	give_back(sv, id);
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

/* ---- the table: JSON-RPC names, MCP tool names, schemas ------------------------------ */

#define P_SESSION                                                                                  \
	"\"session\": {\"type\": \"string\", "                                                   \
	"\"description\": \"session id (default: the default session)\"}"

static const struct method {
	const char *name;  /* JSON-RPC method */
	const char *tool;  /* MCP tool name, or NULL */
	method_fn fn;
	const char *description;
	const char *schema; /* inputSchema properties and required, JSON */
} methods[] = {
	{ "session.exec", "shell", m_exec,
	  "Run a shell command (/bin/sh -c) in a sandboxed session: the session's environment, "
	  "aliases and directory apply, and a cd in the command moves the session.",
	  "{\"type\": \"object\", \"properties\": {"
	  "\"command\": {\"type\": \"string\", \"description\": \"the command line\"},"
	  "\"workdir\": {\"type\": \"string\", \"description\": \"directory to start in\"},"
	  "\"timeout\": {\"type\": \"integer\", \"minimum\": 1, \"description\": \"seconds (default 30)\"},"
	  "\"concurrent\": {\"type\": \"boolean\"}, " P_SESSION
	  "}, \"required\": [\"command\"]}" },
	{ "session.create", "session_create", m_create, "Start a new session.",
	  "{\"type\": \"object\", \"properties\": {"
	  "\"workdir\": {\"type\": \"string\"}, \"isolation\": {\"enum\": [\"fresh\", \"shared\"]},"
	  "\"timeout\": {\"type\": \"integer\", \"minimum\": 1},"
	  "\"env\": {\"description\": \"\\\"host\\\" (safe variables), \\\"empty\\\", or an object\"},"
	  "\"cwd\": {\"type\": \"string\"}, \"oldpwd\": {\"type\": \"string\"}}}" },
	{ "session.list", "session_list", m_list, "List the sessions.",
	  "{\"type\": \"object\", \"properties\": {}}" },
	{ "session.close", "session_close", m_close, "Close a session; its processes end.",
	  "{\"type\": \"object\", \"properties\": {" P_SESSION "}, \"required\": [\"session\"]}" },
	{ "session.env.set", "env_set", m_env_set, "Set an environment variable for later commands.",
	  "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}, "
	  "\"value\": {\"type\": \"string\"}, " P_SESSION "}, \"required\": [\"name\", \"value\"]}" },
	{ "session.env.unset", "env_unset", m_env_unset, "Remove an environment variable.",
	  "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}, " P_SESSION
	  "}, \"required\": [\"name\"]}" },
	{ "session.env.list", "env_list", m_env_list, "The session's environment.",
	  "{\"type\": \"object\", \"properties\": {" P_SESSION "}}" },
	{ "session.alias.set", "alias_set", m_alias_set, "Define an alias.",
	  "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}, "
	  "\"value\": {\"type\": \"string\"}, " P_SESSION "}, \"required\": [\"name\", \"value\"]}" },
	{ "session.alias.remove", "alias_remove", m_alias_remove, "Remove an alias.",
	  "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}, " P_SESSION
	  "}, \"required\": [\"name\"]}" },
	{ "session.alias.list", "alias_list", m_alias_list, "The session's aliases.",
	  "{\"type\": \"object\", \"properties\": {" P_SESSION "}}" },
	{ "session.cd", "cd", m_cd, "Change the session's directory.",
	  "{\"type\": \"object\", \"properties\": {\"dir\": {\"type\": \"string\"}, " P_SESSION
	  "}, \"required\": [\"dir\"]}" },
	{ "session.pwd", "pwd", m_pwd, "The session's directory.",
	  "{\"type\": \"object\", \"properties\": {" P_SESSION "}}" },
	{ "session.history.search", "history_search", m_history,
	  "The session's command history, by prefix or substring.",
	  "{\"type\": \"object\", \"properties\": {\"prefix\": {\"type\": \"string\"}, "
	  "\"contains\": {\"type\": \"string\"}, \"limit\": {\"type\": \"integer\", \"minimum\": 0}, "
	  P_SESSION "}}" },
	{ "session.history.replay", "history_replay", m_replay,
	  "Run a history entry again (checked again like any command).",
	  "{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"integer\", \"minimum\": 1}, "
	  "\"timeout\": {\"type\": \"integer\", \"minimum\": 1}, " P_SESSION
	  "}, \"required\": [\"id\"]}" },
	{ "session.changes", "changes_list", m_changes,
	  "Overlay workdir mode: what the session's commands changed so far (not yet in the "
	  "real workdir).",
	  "{\"type\": \"object\", \"properties\": {" P_SESSION "}}" },
	{ "session.changes.diff", "changes_diff", m_changes_diff,
	  "Overlay workdir mode: the session's changes as a unified diff.",
	  "{\"type\": \"object\", \"properties\": {" P_SESSION "}}" },
	{ "session.changes.apply", "changes_apply", m_changes_apply,
	  "Overlay workdir mode: copy the session's changes into the real workdir.",
	  "{\"type\": \"object\", \"properties\": {\"force\": {\"type\": \"boolean\", "
	  "\"description\": \"apply over files edited meanwhile\"}, " P_SESSION "}}" },
	{ "session.changes.discard", "changes_discard", m_changes_discard,
	  "Overlay workdir mode: drop the session's changes.",
	  "{\"type\": \"object\", \"properties\": {" P_SESSION "}}" },
};

static const struct method *find_method(const char *name, bool tool)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(methods); i++)
		if (strcmp(tool ? (methods[i].tool ? methods[i].tool : "") : methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}

/* ---- MCP ----------------------------------------------------------------------------- */

static const char *const mcp_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05" };

static int m_initialize(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
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
	*result = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}", "protocolVersion", v,
			    "capabilities", "tools", "listChanged", 0, "serverInfo", "name", "ward",
			    "version", WARD_VERSION, "instructions",
			    "Each tool runs in a sandbox; sessions keep environment, aliases, "
			    "history and directory across commands.");
	return 0;
}

static int m_tools_list(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	json_t *tools = json_array();
	size_t i;

	(void)sv;
	(void)params;
	for (i = 0; i < ARRAY_SIZE(methods); i++) {
		json_t *schema = json_loads(methods[i].schema, 0, NULL);

		if (!schema)
			return rpc_fail(e, RPC_INTERNAL_ERROR, "schema of %s", methods[i].tool);
		json_array_append_new(tools, json_pack("{s:s, s:s, s:o}", "name", methods[i].tool,
						       "description", methods[i].description,
						       "inputSchema", schema));
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

static int tool_arguments_check(const struct method *m, const char *name, json_t *args,
				struct rpc_error *e)
{
	json_t *schema = json_loads(m->schema, 0, NULL);
	json_t *props = json_object_get(schema, "properties");
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
	json_decref(schema);
	return rc;
}

static int m_tools_call(struct server *sv, json_t *params, json_t **result, struct rpc_error *e)
{
	const char *name;
	json_t *args = NULL, *meta = NULL, *r = NULL;
	const struct method *m;
	struct rpc_error te = { 0 };
	char *text;
	bool is_error;

	if (params_unpack(params, e, "{s:s, s?o, s?o}", "name", &name, "arguments", &args, "_meta",
			  &meta) < 0)
		return -1;
	if (args && !json_is_object(args))
		return rpc_fail(e, RPC_INVALID_PARAMS, "arguments: must be an object, got %s",
				ward_json_type_name(args));
	m = find_method(name, true);
	if (!m)
		return rpc_fail(e, RPC_INVALID_PARAMS, "unknown tool \"%s\"", name);
	if (!args)
		args = json_object();
	else
		json_incref(args);
	/* A tool takes exactly what its schema lists. The arguments are the
	 * model's words: "approved" (which the JSON-RPC method takes from the
	 * host program) is refused by name, and nothing runs. */
	if (tool_arguments_check(m, name, args, &te) < 0) {
		json_decref(args);
		*result = json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
				    te.message, "isError", 1);
		return 0;
	}
	/* A tool's failure is the tool's result (isError), so the model sees it. */
	if (m->fn(sv, args, &r, &te) < 0) {
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

/* SIGTERM, SIGINT, SIGHUP: the handler only writes a byte to a pipe (all
 * it may do); the watcher thread reading that pipe does the rest — marks the
 * server stopping, kills every command's sandbox (cancel_fd), wakes every
 * wait. Then the main thread ends as at end of input: every session closed,
 * nothing left behind; whether the client reads its output or not. */
static int stop_pipe[2] = { -1, -1 };

static void on_stop(int sig)
{
	int saved = errno;
	char c = 's';

	(void)sig;
	if (write(stop_pipe[1], &c, 1) < 0) {
		/* full: a stop is already on its way */
	}
	errno = saved;
}

static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };

/* Start a helper thread with the stop signals blocked: the handler runs on
 * the main thread (or a command's), never on one of these. */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t block, old;
	size_t k;
	int rc;

	sigemptyset(&block);
	for (k = 0; k < ARRAY_SIZE(stop_signals); k++)
		sigaddset(&block, stop_signals[k]);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void *watcher_main(void *arg)
{
	struct server *sv = arg;
	char c = 0;

	while (read(stop_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	if (c != 's')
		return NULL; /* the normal end */
	sv->stopping = true;
	{
		uint64_t one = 1;

		if (write(sv->cancel_fd, &one, sizeof(one)) < 0) {
			/* an eventfd at its maximum is readable anyway */
		}
	}
	pthread_mutex_lock(&sv->lock);
	pthread_cond_broadcast(&sv->idle);
	pthread_cond_broadcast(&sv->answer_cond);
	pthread_mutex_unlock(&sv->lock);
	pthread_mutex_lock(&sv->out_lock);
	pthread_cond_broadcast(&sv->out_cond);
	pthread_mutex_unlock(&sv->out_lock);
	pthread_mutex_lock(&sv->in_lock);
	pthread_cond_broadcast(&sv->in_cond);
	pthread_mutex_unlock(&sv->in_lock);
	return NULL;
}

/* ---- output ------------------------------------------------------------------------ */

static void *writer_main(void *arg)
{
	struct server *sv = arg;

	pthread_mutex_lock(&sv->out_lock);
	for (;;) {
		struct outmsg *m;

		while (!sv->oq_head && !sv->writer_exit && !sv->stopping)
			pthread_cond_wait(&sv->out_cond, &sv->out_lock);
		if (!sv->oq_head || sv->stopping)
			break;
		m = sv->oq_head;
		sv->oq_head = m->next;
		if (!sv->oq_head)
			sv->oq_tail = NULL;
		sv->writing = true;
		pthread_mutex_unlock(&sv->out_lock);
		/* Blocking, and only here: a client that does not read holds
		 * this thread, nothing else. */
		if (!sv->out_broken && ward_write_all(sv->out_fd, m->data, m->len) < 0)
			sv->out_broken = true; /* the client went: drop the rest */
		pthread_mutex_lock(&sv->out_lock);
		sv->writing = false;
		sv->oq_bytes -= m->len;
		free(m);
		pthread_cond_broadcast(&sv->out_cond);
	}
	pthread_mutex_unlock(&sv->out_lock);
	return NULL;
}

/* Queue one message. The queue holds at most a response's worth
 * (session.limits.response_bytes) beyond the message being written; a
 * sender waits for room, or drops the message once the server stops. */
static void emit(struct server *sv, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t len = s ? strlen(s) : 0;
	struct outmsg *m;

	if (!s)
		return;
	if (len > sv->lim.response_bytes) {
		/* The answer is too large: say so, under the same id. */
		json_t *id = json_is_object(msg) ? json_object_get(msg, "id") : NULL;
		char text[160];
		json_t *err;

		snprintf(text, sizeof(text),
			 "response of %zu bytes is larger than %zu bytes "
			 "(policy session.limits.response_bytes)",
			 len, sv->lim.response_bytes);
		err = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
				id ? id : json_null(), "error", "code", RPC_SERVER_ERROR, "message",
				text);

		free(s);
		s = err ? json_dumps(err, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(err);
		if (!s)
			return;
		len = strlen(s);
	}
	m = malloc(sizeof(*m) + len + 1);
	if (!m) {
		free(s);
		return;
	}
	memcpy(m->data, s, len);
	m->data[len] = '\n';
	m->len = len + 1;
	m->next = NULL;
	free(s);
	pthread_mutex_lock(&sv->out_lock);
	while (sv->oq_bytes > 0 && sv->oq_bytes + m->len > sv->lim.response_bytes &&
	       !sv->stopping)
		pthread_cond_wait(&sv->out_cond, &sv->out_lock);
	if (sv->stopping) {
		pthread_mutex_unlock(&sv->out_lock);
		free(m);
		return;
	}
	if (sv->oq_tail)
		sv->oq_tail->next = m;
	else
		sv->oq_head = m;
	sv->oq_tail = m;
	sv->oq_bytes += m->len;
	pthread_cond_broadcast(&sv->out_cond);
	pthread_mutex_unlock(&sv->out_lock);
}

static json_t *error_response(json_t *id, const struct rpc_error *e)
{
	json_t *err = json_pack("{s:i, s:s}", "code", e->code, "message", e->message);

	if (e->kind)
		json_object_set_new(err, "data", json_pack("{s:s}", "kind", e->kind));
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error",
			 err);
}

/* The method to call for a request, or NULL with e filled. */
static method_fn resolve(const char *method, struct rpc_error *e)
{
	const struct method *m = find_method(method, false);
	size_t i;

	if (m)
		return m->fn;
	for (i = 0; i < ARRAY_SIZE(protocol); i++)
		if (strcmp(protocol[i].name, method) == 0)
			return protocol[i].fn;
	rpc_fail(e, RPC_METHOD_NOT_FOUND, "method not found: \"%s\"", method);
	return NULL;
}

/* Validate the envelope; the method and params in *fn and *params. Returns
 * 0, or -1 with e (an Invalid Request). */
static int envelope(json_t *req, json_t **id, method_fn *fn, json_t **params, bool *notify,
		    struct rpc_error *e)
{
	const char *k;
	json_t *v, *method;

	*id = NULL;
	*notify = false;
	if (!json_is_object(req))
		return rpc_fail(e, RPC_INVALID_REQUEST, "a request must be an object, got %s",
				ward_json_type_name(req));
	v = json_object_get(req, "id");
	if (v && !json_is_string(v) && !json_is_integer(v) && !json_is_null(v))
		return rpc_fail(e, RPC_INVALID_REQUEST, "\"id\" must be a string or an integer");
	*id = v;
	*notify = !v;
	json_object_foreach(req, k, v)
		if (strcmp(k, "jsonrpc") && strcmp(k, "id") && strcmp(k, "method") &&
		    strcmp(k, "params"))
			return rpc_fail(e, RPC_INVALID_REQUEST, "unknown member \"%s\"", k);
	if (!json_is_string(json_object_get(req, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(req, "jsonrpc")), "2.0") != 0)
		return rpc_fail(e, RPC_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
	method = json_object_get(req, "method");
	if (!json_is_string(method))
		return rpc_fail(e, RPC_INVALID_REQUEST, "\"method\" must be a string");
	*params = json_object_get(req, "params");
	if (*params && json_is_array(*params) && json_array_size(*params) == 0)
		*params = NULL;
	if (*params && !json_is_object(*params) && !json_is_null(*params))
		return rpc_fail(e, RPC_INVALID_PARAMS, "\"params\" must be an object, got %s",
				ward_json_type_name(*params));
	*fn = resolve(json_string_value(method), e);
	return *fn ? 0 : -1;
}

/* One request: the response, or NULL for a notification. */
static json_t *handle(struct server *sv, json_t *req)
{
	struct rpc_error e = { 0 };
	json_t *id, *params = NULL, *result = NULL, *resp;
	method_fn fn = NULL;
	bool notify;

	if (envelope(req, &id, &fn, &params, &notify, &e) < 0) {
		/* Notifications get no answer, even an error (JSON-RPC 2.0 §4.1),
		 * unless the envelope itself is broken. */
		if (notify && e.code != RPC_INVALID_REQUEST)
			return NULL;
		return error_response(id, &e);
	}
	if (!params || json_is_null(params))
		params = json_object();
	else
		json_incref(params);
	if (fn(sv, params, &result, &e) < 0) {
		json_decref(params);
		return notify ? NULL : error_response(id, &e);
	}
	json_decref(params);
	if (notify) {
		json_decref(result);
		return NULL;
	}
	resp = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result",
			 result ? result : json_object());
	return resp;
}

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

/* The session's ask callback: put the command to the person through the
 * client, wait (bounded) for the answer. True only on explicit acceptance:
 * action "accept" with "approve": true. No capability, decline, cancel, an
 * error response, no answer in time, the client gone, the server stopping:
 * false, and the command is refused with ApprovalRequired. Runs on the main
 * thread or a request's; the reader thread routes the answer. */
static bool ask_client(void *ctx, const char *command, const struct ward_verdict *v)
{
	struct question *q = ctx;
	struct server *sv = q->sv;
	struct pending *p = NULL;
	_cleanup_free_ char *cmd = NULL, *typed = NULL, *how = NULL, *message = NULL;
	char idbuf[48];
	struct timespec deadline;
	json_t *req;
	bool ok;
	size_t i;

	if (!sv->elicit || sv->stopping)
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
			"approve", "type", "boolean", "title", "Run this command",
			"description", "Yes runs it once; no refuses it.", "default", 0,
			"required", "approve");
	if (req) {
		emit(sv, req);
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

/* A message with no method and an id is a response (JSON-RPC 2.0 §5): the
 * client's answer to a question. Never answered; one that matches no open
 * question (unknown, late, twice, malformed) is dropped. */
static bool is_response(json_t *msg)
{
	return json_is_object(msg) && !json_object_get(msg, "method") &&
	       json_object_get(msg, "id") &&
	       (json_object_get(msg, "result") || json_object_get(msg, "error"));
}

static void route_response(struct server *sv, json_t *msg)
{
	const char *id = json_string_value(json_object_get(msg, "id"));
	json_t *result = json_object_get(msg, "result");
	unsigned long n;
	char *end;
	size_t i;

	if (!id || strncmp(id, "ward-approval-", 14) != 0)
		return;
	errno = 0;
	n = strtoul(id + 14, &end, 10);
	if (errno || *end || n == 0)
		return;
	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < PENDING_MAX; i++) {
		struct pending *p = &sv->pending[i];
		const char *action;

		if (p->id != n || p->answered)
			continue;
		action = json_string_value(json_object_get(result, "action"));
		p->answered = true;
		p->accepted = json_is_object(result) && action && strcmp(action, "accept") == 0 &&
			      json_is_true(json_object_get(json_object_get(result, "content"),
							   "approve"));
		pthread_cond_broadcast(&sv->answer_cond);
	}
	pthread_mutex_unlock(&sv->lock);
}

/* ---- input ------------------------------------------------------------------------- */

static void answer_error(struct server *sv, json_t *id, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void answer_error(struct server *sv, json_t *id, int code, const char *fmt, ...)
{
	struct rpc_error e = { .code = code };
	json_t *resp;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e.message, sizeof(e.message), fmt, ap);
	va_end(ap);
	resp = error_response(id, &e);
	emit(sv, resp);
	json_decref(resp);
}

/* One line: a parse error answered here, a response routed here, a request
 * queued for the main thread (waiting while the queue is full). */
static void take_line(struct server *sv, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *msg;
	struct inmsg *m;

	if (strspn(line, " \t\r") == len)
		return; /* blank lines between messages are tolerated */
	msg = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg) {
		if (json_error_code(&jerr) == json_error_null_character)
			/* jansson's own text names its flag, JSON_ALLOW_NUL */
			answer_error(sv, NULL, RPC_PARSE_ERROR,
				     "parse error: a string holds \\u0000 (NUL), which no command, "
				     "path or name can contain, at column %d",
				     jerr.column);
		else
			answer_error(sv, NULL, RPC_PARSE_ERROR, "parse error: %s at column %d",
				     jerr.text, jerr.column);
		return;
	}
	if (is_response(msg)) {
		route_response(sv, msg);
		json_decref(msg);
		return;
	}
	/* A ping is answered here, at once, even while the main thread waits
	 * for a person's answer or runs a command: the client sees a server
	 * that is alive. */
	if (json_is_object(msg) && json_object_size(msg) <= 4 &&
	    json_is_string(json_object_get(msg, "method")) &&
	    strcmp(json_string_value(json_object_get(msg, "method")), "ping") == 0 &&
	    (json_is_string(json_object_get(msg, "id")) ||
	     json_is_integer(json_object_get(msg, "id"))) &&
	    json_is_string(json_object_get(msg, "jsonrpc")) &&
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") == 0 &&
	    json_object_size(msg) == 3 + !!json_object_get(msg, "params")) {
		json_t *resp = json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id",
					 json_object_get(msg, "id"), "result");

		if (resp)
			emit(sv, resp);
		json_decref(resp);
		json_decref(msg);
		return;
	}
	m = malloc(sizeof(*m));
	if (!m) {
		json_decref(msg);
		return;
	}
	m->msg = msg;
	m->len = len;
	m->next = NULL;
	pthread_mutex_lock(&sv->in_lock);
	while (sv->iq_bytes > 0 && sv->iq_bytes + len > INQ_BYTES_MAX && !sv->stopping)
		pthread_cond_wait(&sv->in_cond, &sv->in_lock);
	if (sv->iq_tail)
		sv->iq_tail->next = m;
	else
		sv->iq_head = m;
	sv->iq_tail = m;
	sv->iq_bytes += len;
	pthread_cond_broadcast(&sv->in_cond);
	pthread_mutex_unlock(&sv->in_lock);
}

static void *reader_main(void *arg)
{
	struct server *sv = arg;
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	bool overflow = false;

	while (buf && !sv->stopping) {
		ssize_t n;
		char *nl;

		if (len == cap) {
			char *g = cap < WARD_SERVE_LINE_MAX + 1 ? realloc(buf, cap * 2) : NULL;

			if (g) {
				buf = g;
				cap *= 2;
			} else {
				/* Over the cap: answer once, drop the rest of the line. */
				if (!overflow)
					answer_error(sv, NULL, RPC_INVALID_REQUEST,
						     "message larger than %d bytes",
						     WARD_SERVE_LINE_MAX);
				overflow = true;
				len = 0;
			}
		}
		n = read(sv->in_fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		while ((nl = memchr(buf, '\n', len))) {
			size_t line = (size_t)(nl - buf);

			if (!overflow && line > WARD_SERVE_LINE_MAX) {
				answer_error(sv, NULL, RPC_INVALID_REQUEST,
					     "message larger than %d bytes", WARD_SERVE_LINE_MAX);
			} else if (!overflow) {
				*nl = '\0';
				take_line(sv, buf, line);
			}
			overflow = false;
			memmove(buf, nl + 1, len - line - 1);
			len -= line + 1;
		}
	}
	if (buf && len && !overflow && !sv->stopping)
		take_line(sv, buf, len); /* a last line without its newline */
	free(buf);
	pthread_mutex_lock(&sv->lock);
	sv->in_eof = true; /* no answer will come any more */
	pthread_cond_broadcast(&sv->answer_cond);
	pthread_mutex_unlock(&sv->lock);
	pthread_mutex_lock(&sv->in_lock);
	sv->in_eof = true;
	pthread_cond_broadcast(&sv->in_cond);
	pthread_mutex_unlock(&sv->in_lock);
	return NULL;
}

/* The next request for the main thread; NULL at end of input or stop. */
static json_t *next_request(struct server *sv)
{
	struct inmsg *m;
	json_t *msg;

	pthread_mutex_lock(&sv->in_lock);
	while (!sv->iq_head && !sv->in_eof && !sv->stopping)
		pthread_cond_wait(&sv->in_cond, &sv->in_lock);
	m = sv->stopping ? NULL : sv->iq_head;
	if (m) {
		sv->iq_head = m->next;
		if (!sv->iq_head)
			sv->iq_tail = NULL;
		sv->iq_bytes -= m->len;
		pthread_cond_broadcast(&sv->in_cond);
	}
	pthread_mutex_unlock(&sv->in_lock);
	if (!m)
		return NULL;
	msg = m->msg;
	free(m);
	return msg;
}

/* ---- requests ---------------------------------------------------------------------- */

struct job {
	struct server *sv;
	json_t *req;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	json_t *resp = handle(j->sv, j->req);

	if (resp) {
		emit(j->sv, resp);
		json_decref(resp);
	}
	json_decref(j->req);
	pthread_mutex_lock(&j->sv->lock);
	j->sv->threads--;
	pthread_cond_broadcast(&j->sv->idle);
	pthread_mutex_unlock(&j->sv->lock);
	free(j);
	return NULL;
}

/* A command asked to run concurrently runs on its own thread; its answer
 * comes when it is done, while the next requests are read. */
static bool wants_thread(json_t *req)
{
	json_t *params = json_object_get(req, "params"), *args;
	const char *m = json_string_value(json_object_get(req, "method"));

	if (!m || !json_is_object(params))
		return false;
	if (strcmp(m, "tools/call") == 0) {
		args = json_object_get(params, "arguments");
		return json_is_true(json_object_get(args, "concurrent"));
	}
	return json_is_true(json_object_get(params, "concurrent"));
}

static void dispatch(struct server *sv, json_t *req)
{
	json_t *resp;

	if (wants_thread(req)) {
		struct job *j = malloc(sizeof(*j));
		struct rpc_error e = { 0 };
		json_t *params = json_object_get(req, "params");
		pthread_t t;
		bool room;

		if (strcmp(json_string_value(json_object_get(req, "method")), "tools/call") == 0)
			params = json_object_get(params, "arguments");
		/* The default session is made here, on the main thread: an SSH
		 * master is tied to the thread that starts it. */
		if (!json_object_get(params, "session")) {
			struct entry *en = take_session(sv, params, &e);

			if (en)
				give_back(sv, en->id);
		}
		/* As many threads as sandboxes may be alive: a thread is a
		 * command running, or one waiting for a person. */
		pthread_mutex_lock(&sv->lock);
		room = (size_t)sv->threads < sv->lim.sandboxes;
		sv->threads += room;
		pthread_mutex_unlock(&sv->lock);
		if (!room) {
			free(j);
			answer_error(sv, json_object_get(req, "id"), RPC_SERVER_ERROR,
				     "too many requests running at once: %zu (policy "
				     "session.limits.sandboxes)",
				     sv->lim.sandboxes);
			return;
		}
		if (j) {
			j->sv = sv;
			j->req = json_incref(req);
			if (start_thread(&t, job_main, j) == 0) {
				pthread_detach(t);
				return;
			}
			json_decref(req);
			free(j);
		}
		pthread_mutex_lock(&sv->lock);
		sv->threads--;
		pthread_mutex_unlock(&sv->lock);
	}
	resp = handle(sv, req);
	if (resp) {
		emit(sv, resp);
		json_decref(resp);
	}
}

static void process(struct server *sv, json_t *msg)
{
	if (json_is_array(msg)) {
		json_t *out = json_array(), *v;
		size_t i;

		if (json_array_size(msg) == 0) {
			json_decref(out);
			answer_error(sv, NULL, RPC_INVALID_REQUEST, "empty batch");
			return;
		}
		json_array_foreach(msg, i, v) {
			json_t *r;

			if (is_response(v)) {
				route_response(sv, v);
				continue;
			}
			r = handle(sv, v);
			if (r)
				json_array_append_new(out, r);
		}
		if (json_array_size(out))
			emit(sv, out);
		json_decref(out);
	} else {
		dispatch(sv, msg);
	}
}

/* The limits and rate limit the server itself keeps, from the policy. */
static void server_policy(struct server *sv, const struct serve_options *o)
{
	struct ward_config cfg;
	struct ward_error *err = NULL;

	ward_config_init(&cfg);
	ward_session_limits_init(&sv->lim);
	if (serve_config(o, &cfg, &err) == 0 && cfg.session)
		sv->lim = cfg.session->limits;
	sv->rate_per_minute = cfg.rate_per_minute;
	sv->rate_per_hour = cfg.rate_per_hour;
	ward_error_free(err);
	ward_config_release(&cfg);
}

int ward_serve_loop(const struct serve_options *o, int in_fd, int out_fd)
{
	/* On the heap, and left there when stopped: the writer may still be
	 * blocked in write() on a client that does not read, and the process
	 * is about to end. */
	struct server *sv = calloc(1, sizeof(*sv));
	pthread_t reader, writer, watcher;
	bool have_reader = false, have_writer = false, have_watcher = false, stopped;
	json_t *msg;
	size_t i;

	if (!sv)
		return WARD_EXIT_OWN_ERROR;
	pthread_mutex_init(&sv->lock, NULL);
	pthread_cond_init(&sv->idle, NULL);
	pthread_mutex_init(&sv->rate_lock, NULL);
	pthread_mutex_init(&sv->out_lock, NULL);
	pthread_cond_init(&sv->out_cond, NULL);
	pthread_mutex_init(&sv->in_lock, NULL);
	pthread_cond_init(&sv->in_cond, NULL);
	pthread_cond_init(&sv->answer_cond, NULL);
	sv->out_fd = out_fd;
	sv->in_fd = in_fd;
	sv->o = o;
	server_policy(sv, o);
	sv->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (sv->cancel_fd < 0 ||
	    (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)) {
		fprintf(stderr, "ward serve: set up: %s\n", strerror(errno));
		return WARD_EXIT_OWN_ERROR;
	}
	/* the watcher blocks on its end; the handler must never block on its */
	fcntl(stop_pipe[0], F_SETFL, fcntl(stop_pipe[0], F_GETFL) & ~O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	have_watcher = start_thread(&watcher, watcher_main, sv) == 0;
	have_writer = start_thread(&writer, writer_main, sv) == 0;
	have_reader = start_thread(&reader, reader_main, sv) == 0;
	if (!have_watcher || !have_writer || !have_reader) {
		fprintf(stderr, "ward serve: cannot start its threads\n");
		return WARD_EXIT_OWN_ERROR;
	}
	for (i = 0; i < ARRAY_SIZE(stop_signals); i++) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_stop;
		sa.sa_flags = SA_RESTART;
		sigaction(stop_signals[i], &sa, NULL);
	}

	while ((msg = next_request(sv))) {
		process(sv, msg);
		json_decref(msg);
	}

	/* Requests on threads end soon: their commands are killed when
	 * stopping, their questions refused. */
	pthread_mutex_lock(&sv->lock);
	while (sv->threads > 0)
		pthread_cond_wait(&sv->idle, &sv->lock);
	pthread_mutex_unlock(&sv->lock);
	for (i = 0; i < sv->n_sessions; i++)
		ward_session_free(sv->sessions[i].s);
	sv->n_sessions = 0;
	free(sv->sessions);
	sv->sessions = NULL;
	ward_ratelog_release(&sv->ratelog);

	/* At the end of input the answers still queued are written; stopped,
	 * they are dropped. */
	pthread_mutex_lock(&sv->out_lock);
	while ((sv->oq_head || sv->writing) && !sv->stopping)
		pthread_cond_wait(&sv->out_cond, &sv->out_lock);
	sv->writer_exit = true;
	pthread_cond_broadcast(&sv->out_cond);
	pthread_mutex_unlock(&sv->out_lock);
	stopped = sv->stopping;
	if (stopped)
		return 0; /* the reader and the writer may be blocked: leave them */
	{
		char c = 'q';

		if (write(stop_pipe[1], &c, 1) < 0) {
			/* the watcher woke already */
		}
	}
	pthread_join(watcher, NULL);
	pthread_join(writer, NULL);
	pthread_join(reader, NULL);
	close(sv->cancel_fd);
	free(sv);
	return 0;
}

/* ---- the command line ------------------------------------------------------------- */

static const char usage[] =
	"usage: ward serve [options]\n"
	"\n"
	"JSON-RPC 2.0 on stdin/stdout, one message per line; also a Model Context\n"
	"Protocol server (initialize, tools/list, tools/call).\n"
	"\n"
	"  -C, --workdir DIR      default workdir of new sessions (default: current directory)\n"
	"      --workdir-root DIR a directory under which session.create may name a\n"
	"                         workdir (repeatable; default: the current directory)\n"
	"      --allow-workdir-anywhere  let a workdir be a system directory, another\n"
	"                         user's home or above a home\n"
	"      --allow-home-workdir  let a workdir be a home directory itself\n"
	"  -t, --timeout SECONDS  default command timeout of new sessions (default 30)\n"
	"      --isolation MODE   fresh (a sandbox per command) or shared (one per session)\n"
	"      --empty-env        sessions start with no variables\n"
	"      --sandbox MODE     required (default) or off\n"
	"      --policy FILE      the policy file (default: as for ward run)\n"
	"      --no-policy        built-in defaults only\n"
	"  -h, --help             this text\n";

int serve_config(const struct serve_options *o, struct ward_config *cfg, struct ward_error **err)
{
	const char *cap = getenv("WARD_LANDLOCK_ABI_MAX");

	if (o->policy && ward_policy_load(o->policy, cfg, err) < 0)
		return -1;
	if (cap && *cap &&
	    ward_landlock_parse_abi("WARD_LANDLOCK_ABI_MAX", cap, &cfg->landlock_abi_max, err) < 0)
		return -1;
	if (o->sandbox_off)
		cfg->mode = WARD_SANDBOX_OFF;
	cfg->admit.anywhere = o->allow_anywhere;
	cfg->admit.home = o->allow_home;
	for (size_t i = 0; i < o->n_roots; i++) {
		char real[PATH_MAX];

		if (!realpath(o->roots[i], real))
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
						    "--workdir-root '%s'", o->roots[i]);
		if (ward_admit_add_root(&cfg->admit, real, err) < 0)
			return -1;
	}
	if (o->workdir && ward_config_set_workdir(cfg, o->workdir, err) < 0)
		return -1;
	return 0;
}

void serve_session_defaults(const struct serve_options *o, struct ward_session_options *opt)
{
	if (o->timeout)
		opt->timeout = o->timeout;
	if (o->isolation_set)
		opt->isolation = o->isolation;
	if (o->empty_env)
		opt->empty_env = true;
}

int serve_options_parse(int argc, char **argv, struct serve_options *o, bool *help,
			struct ward_error **err)
{
	static const struct option opts[] = {
		{ "workdir", required_argument, NULL, 'C' },
		{ "timeout", required_argument, NULL, 't' },
		{ "isolation", required_argument, NULL, 'i' },
		{ "empty-env", no_argument, NULL, 'e' },
		{ "sandbox", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "no-policy", no_argument, NULL, 'n' },
		{ "workdir-root", required_argument, NULL, 'R' },
		{ "allow-workdir-anywhere", no_argument, NULL, 'A' },
		{ "allow-home-workdir", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool no_policy = false;
	long long t;
	int c;

	memset(o, 0, sizeof(*o));
	*help = false;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:C:t:h", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			o->workdir = optarg;
			break;
		case 't':
			if (ward_parse_timeout(optarg, &t, err) < 0)
				return -1;
			o->timeout = (int)t;
			break;
		case 'i':
			if (strcmp(optarg, "fresh") && strcmp(optarg, "shared"))
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "unknown isolation '%s' (known: fresh, "
							    "shared)", optarg);
			o->isolation = strcmp(optarg, "shared") == 0 ? WARD_SESSION_SHARED :
								       WARD_SESSION_FRESH;
			o->isolation_set = true;
			break;
		case 'e':
			o->empty_env = true;
			break;
		case 's':
			if (strcmp(optarg, "required") && strcmp(optarg, "off"))
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "unknown sandbox mode '%s' (known: "
							    "required, off)", optarg);
			o->sandbox_off = strcmp(optarg, "off") == 0;
			break;
		case 'p':
			o->policy = optarg;
			break;
		case 'n':
			no_policy = true;
			break;
		case 'R':
			if (o->n_roots == sizeof(o->roots) / sizeof(o->roots[0]))
				return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
							    "too many --workdir-root options");
			o->roots[o->n_roots++] = optarg;
			break;
		case 'A':
			o->allow_anywhere = true;
			break;
		case 'H':
			o->allow_home = true;
			break;
		case 'h':
			*help = true;
			break;
		case ':':
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "option '%s' needs a value", argv[optind - 1]);
		default:
			return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
						    "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "unexpected argument '%s'", argv[optind]);
	if (no_policy && o->policy)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "give either --policy or --no-policy, not both");
	if (!no_policy && !o->policy) {
		o->policy_owned = ward_policy_default_path();
		o->policy = o->policy_owned;
	}
	return 0;
}

int ward_cmd_serve(int argc, char **argv)
{
	struct serve_options o;
	struct ward_error *err = NULL;
	struct ward_config probe;
	bool help;
	int rc;

	if (serve_options_parse(argc, argv, &o, &help, &err) < 0) {
		fprintf(stderr, "ward serve: %s\ntry 'ward serve --help'\n", ward_shown(err->message));
		ward_error_free(err);
		return WARD_EXIT_OWN_ERROR;
	}
	if (help) {
		fputs(usage, stdout);
		free(o.policy_owned);
		return 0;
	}
	/* A bad policy or workdir is said now, once, rather than per session. */
	ward_config_init(&probe);
	if (serve_config(&o, &probe, &err) < 0) {
		fprintf(stderr, "ward serve: %s\n", ward_shown(err->message));
		ward_error_free(err);
		ward_config_release(&probe);
		free(o.policy_owned);
		return WARD_EXIT_OWN_ERROR;
	}
	ward_config_release(&probe);
	rc = ward_serve_loop(&o, 0, 1);
	free(o.policy_owned);
	return rc;
}
