/* rpc.c — the server of `ward serve`: JSON-RPC 2.0 on a pair of file
 * descriptors, one message per line. A reader thread parses lines and routes
 * responses (the client's answers to questions), a writer thread empties a
 * bounded output queue, a watcher thread acts on the stop signals; the main
 * thread takes requests in order, a command asked to run concurrently runs
 * on a thread of its own. The methods are mcp.c's.
 *
 * The server never dies of its input: malformed JSON, unknown methods, wrong
 * parameter types and over-long lines are answered with JSON-RPC errors and
 * the sessions stay. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "runtime/cli/cli-internal.h"
#include "runtime/util/util-internal.h"
#include "runtime/cli/serve-internal.h"
#include "ward/session.h"

/* ---- errors ---------------------------------------------------------------- */

int rpc_fail(struct rpc_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return -1;
}

int rpc_from(struct rpc_error *e, struct ward_error *w)
{
	e->code = w && w->kind == WARD_ERR_INVALID_PARAMETERS ? RPC_INVALID_PARAMS :
								  RPC_SERVER_ERROR;
	snprintf(e->message, sizeof(e->message), "%s", w ? w->message : "out of memory");
	e->kind = w ? ward_error_kind_name(w->kind) : NULL;
	ward_error_free(w);
	return -1;
}

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
	/* the commands that wait on their own request's eventfd */
	pthread_mutex_lock(&sv->in_lock);
	for (struct inflight *f = sv->inflight; f; f = f->next) {
		uint64_t one = 1;

		if (write(f->cancel_fd, &one, sizeof(one)) < 0) {
			/* at its maximum: readable anyway */
		}
	}
	pthread_mutex_unlock(&sv->in_lock);
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

/* One line of text (s[0..len) and a newline) as a queued message; s is
 * freed. NULL when out of memory. */
static struct outmsg *message_of(char *s, size_t len)
{
	struct outmsg *m = malloc(sizeof(*m) + len + 1);

	if (m) {
		memcpy(m->data, s, len);
		m->data[len] = '\n';
		m->len = len + 1;
		m->next = NULL;
	}
	free(s);
	return m;
}

/* Append m to the queue and wake the writer; out_lock held. */
static void enqueue_locked(struct server *sv, struct outmsg *m)
{
	if (sv->oq_tail)
		sv->oq_tail->next = m;
	else
		sv->oq_head = m;
	sv->oq_tail = m;
	sv->oq_bytes += m->len;
	pthread_cond_broadcast(&sv->out_cond);
}

/* Queue a notification only if there is room now: dropped, not waited for,
 * when the client is not reading (a progress notification must never hold
 * up the command loop that sends it, whose deadline it would stall). */
void rpc_emit_nowait(struct server *sv, json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	size_t len = s ? strlen(s) : 0;
	struct outmsg *m;

	if (!s)
		return;
	if (len > sv->lim.response_bytes) {
		free(s);
		return;
	}
	m = message_of(s, len);
	if (!m)
		return;
	pthread_mutex_lock(&sv->out_lock);
	if (sv->stopping || (sv->oq_bytes > 0 && sv->oq_bytes + m->len > sv->lim.response_bytes / 2)) {
		pthread_mutex_unlock(&sv->out_lock);
		free(m);
		return;
	}
	enqueue_locked(sv, m);
	pthread_mutex_unlock(&sv->out_lock);
}

/* Queue one message. The queue holds at most a response's worth
 * (session.limits.response_bytes) beyond the message being written; a
 * sender waits for room, or drops the message once the server stops. */
void rpc_emit(struct server *sv, json_t *msg)
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
	m = message_of(s, len);
	if (!m)
		return;
	pthread_mutex_lock(&sv->out_lock);
	while (sv->oq_bytes > 0 && sv->oq_bytes + m->len > sv->lim.response_bytes &&
	       !sv->stopping)
		pthread_cond_wait(&sv->out_cond, &sv->out_lock);
	if (sv->stopping) {
		pthread_mutex_unlock(&sv->out_lock);
		free(m);
		return;
	}
	enqueue_locked(sv, m);
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

/* Validate the envelope; the method and params in *fn and *params. Returns
 * 0, or -1 with e (an Invalid Request). */
static int envelope(json_t *req, json_t **id, method_fn *fn, json_t **params, bool *notify,
		    struct rpc_error *e)
{
	const char *version, *method;
	struct ward_error *w = NULL;
	json_t *v;

	*id = NULL;
	*notify = false;
	if (!json_is_object(req))
		return rpc_fail(e, RPC_INVALID_REQUEST, "a request must be an object, got %s",
				ward_json_type_name(req));
	/* the id first: an error about the rest is answered to it */
	v = json_object_get(req, "id");
	if (v && !json_is_string(v) && !json_is_integer(v) && !json_is_null(v))
		return rpc_fail(e, RPC_INVALID_REQUEST, "id: must be a string or an integer, got %s",
				ward_json_type_name(v));
	*id = v;
	*notify = !v;
	/* the members and their types (runtime/jschema-internal.h), as the
	 * methods' parameters are checked */
	if (ward_jschema_unpack(req, NULL, NULL, &w, "{s:s, s?o, s:s, s?o}", "jsonrpc", &version,
				"id", &v, "method", &method, "params", params) < 0) {
		rpc_fail(e, RPC_INVALID_REQUEST, "%s", w ? w->message : "out of memory");
		ward_error_free(w);
		return -1;
	}
	if (strcmp(version, "2.0") != 0)
		return rpc_fail(e, RPC_INVALID_REQUEST, "jsonrpc: must be \"2.0\"");
	if (*params && json_is_array(*params) && json_array_size(*params) == 0)
		*params = NULL;
	if (*params && !json_is_object(*params) && !json_is_null(*params))
		return rpc_fail(e, RPC_INVALID_PARAMS, "params: must be an object, got %s",
				ward_json_type_name(*params));
	*fn = mcp_resolve(method, e);
	return *fn ? 0 : -1;
}

/* One request: the response, or NULL for a notification. */
/* ---- cancellation (MCP notifications/cancelled) ----------------------------------- */

static __thread struct inflight *current;

int rpc_current_cancel_fd(void)
{
	return current ? current->cancel_fd : -1;
}

/* A request that runs a command: cancellable by its id. */
static bool cancellable(json_t *req)
{
	const char *m = json_string_value(json_object_get(req, "method"));

	return m && (strcmp(m, "tools/call") == 0 || strcmp(m, "session.exec") == 0 ||
		     strcmp(m, "session.history.replay") == 0 || strcmp(m, "session.cd") == 0);
}

/* in_lock held: registered as it leaves the queue, so that a cancellation
 * finds it queued or in flight, never in between. */
static struct inflight *inflight_add(struct server *sv, json_t *id, bool cancelled)
{
	struct inflight *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (f->cancel_fd < 0) {
		free(f);
		return NULL;
	}
	f->id = json_incref(id);
	f->next = sv->inflight;
	sv->inflight = f;
	f->cancelled = cancelled;
	if (cancelled || sv->stopping) {
		uint64_t one = 1;

		if (write(f->cancel_fd, &one, sizeof(one)) < 0) {
			/* at its maximum: readable anyway */
		}
	}
	return f;
}

/* Unlinked; whether it was cancelled. */
static bool inflight_remove(struct server *sv, struct inflight *f)
{
	struct inflight **p;
	bool cancelled;

	pthread_mutex_lock(&sv->in_lock);
	for (p = &sv->inflight; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	cancelled = f->cancelled;
	pthread_mutex_unlock(&sv->in_lock);
	close(f->cancel_fd);
	json_decref(f->id);
	free(f);
	return cancelled;
}

/* From the reader thread, at once: the command of the request named is
 * killed (its sandbox), whatever thread runs it, or the request, still
 * queued, is marked so that it is killed as it starts; its answer is not
 * sent (MCP: a cancelled request gets none). Unknown or finished ids:
 * nothing. */
static void cancel_request(struct server *sv, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	struct inflight *f;
	struct inmsg *m;

	if (!rid)
		return;
	pthread_mutex_lock(&sv->in_lock);
	for (f = sv->inflight; f; f = f->next)
		if (json_equal(f->id, rid)) {
			uint64_t one = 1;

			f->cancelled = true;
			if (write(f->cancel_fd, &one, sizeof(one)) < 0) {
				/* at its maximum: readable anyway */
			}
		}
	for (m = sv->iq_head; m; m = m->next)
		if (json_is_object(m->msg) && json_equal(json_object_get(m->msg, "id"), rid))
			m->cancelled = true;
	pthread_mutex_unlock(&sv->in_lock);
}

static json_t *handle(struct server *sv, json_t *req, struct inflight *f)
{
	struct rpc_error e = { 0 };
	json_t *id, *params = NULL, *result = NULL, *resp;
	method_fn fn = NULL;
	bool notify, cancelled = false;
	int rc;

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
	current = f;
	rc = fn(sv, params, &result, &e);
	current = NULL;
	if (f)
		cancelled = inflight_remove(sv, f);
	if (rc < 0) {
		json_decref(params);
		return notify || cancelled ? NULL : error_response(id, &e);
	}
	json_decref(params);
	if (notify || cancelled) {
		json_decref(result);
		return NULL;
	}
	resp = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result",
			 result ? result : json_object());
	return resp;
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
	/* JSON-RPC 2.0 §5: result or error, never both; one with an error
	 * member is a refusal whatever result it carries beside it */
	bool refused = json_object_get(msg, "error") != NULL;
	unsigned long n;
	char *end, spelt[48];
	size_t i;

	if (!id || strncmp(id, "ward-approval-", 14) != 0)
		return;
	errno = 0;
	n = strtoul(id + 14, &end, 10);
	if (errno || *end || n == 0)
		return;
	/* the question's id as the server wrote it, not one strtoul reads
	 * alike ("ward-approval-01", "-+1", "- 1") */
	snprintf(spelt, sizeof(spelt), "ward-approval-%lu", n);
	if (strcmp(id, spelt) != 0)
		return;
	pthread_mutex_lock(&sv->lock);
	for (i = 0; i < PENDING_MAX; i++) {
		struct pending *p = &sv->pending[i];
		const char *action;

		if (p->id != n || p->answered)
			continue;
		action = json_string_value(json_object_get(result, "action"));
		p->answered = true;
		p->accepted = !refused && json_is_object(result) && action &&
			      strcmp(action, "accept") == 0 &&
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
	rpc_emit(sv, resp);
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
	/* A cancellation is acted on here, at once: the main thread may be
	 * running the very command it names. */
	if (json_is_object(msg) && !json_object_get(msg, "id") &&
	    json_is_string(json_object_get(msg, "method")) &&
	    strcmp(json_string_value(json_object_get(msg, "method")), "notifications/cancelled") == 0) {
		cancel_request(sv, json_object_get(msg, "params"));
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
			rpc_emit(sv, resp);
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
	m->cancelled = false;
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
static json_t *next_request(struct server *sv, struct inflight **f)
{
	struct inmsg *m;
	json_t *msg;

	*f = NULL;
	pthread_mutex_lock(&sv->in_lock);
	while (!sv->iq_head && !sv->in_eof && !sv->stopping)
		pthread_cond_wait(&sv->in_cond, &sv->in_lock);
	m = sv->stopping ? NULL : sv->iq_head;
	if (m) {
		sv->iq_head = m->next;
		if (!sv->iq_head)
			sv->iq_tail = NULL;
		sv->iq_bytes -= m->len;
		if (json_is_object(m->msg) && json_object_get(m->msg, "id") && cancellable(m->msg))
			*f = inflight_add(sv, json_object_get(m->msg, "id"), m->cancelled);
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
	struct inflight *f;
};

static void *job_main(void *arg)
{
	struct job *j = arg;
	json_t *resp = handle(j->sv, j->req, j->f);

	if (resp) {
		rpc_emit(j->sv, resp);
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

static void dispatch(struct server *sv, json_t *req, struct inflight *f)
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
			struct entry *en = mcp_take_session(sv, params, &e);

			if (en)
				mcp_give_back(sv, en->id);
		}
		/* As many threads as sandboxes may be alive: a thread is a
		 * command running, or one waiting for a person. */
		pthread_mutex_lock(&sv->lock);
		room = (size_t)sv->threads < sv->lim.sandboxes;
		sv->threads += room;
		pthread_mutex_unlock(&sv->lock);
		if (!room) {
			free(j);
			if (f)
				inflight_remove(sv, f);
			answer_error(sv, json_object_get(req, "id"), RPC_SERVER_ERROR,
				     "too many requests running at once: %zu (policy "
				     "session.limits.sandboxes)",
				     sv->lim.sandboxes);
			return;
		}
		if (j) {
			j->sv = sv;
			j->req = json_incref(req);
			j->f = f;
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
	resp = handle(sv, req, f);
	if (resp) {
		rpc_emit(sv, resp);
		json_decref(resp);
	}
}

static void process(struct server *sv, json_t *msg, struct inflight *f)
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
			r = handle(sv, v, NULL);
			if (r)
				json_array_append_new(out, r);
		}
		if (json_array_size(out))
			rpc_emit(sv, out);
		json_decref(out);
	} else {
		dispatch(sv, msg, f);
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
	struct inflight *f;
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

	while ((msg = next_request(sv, &f))) {
		process(sv, msg, f);
		json_decref(msg);
	}

	/* Requests on threads end soon: their commands are killed when
	 * stopping, their questions refused. */
	pthread_mutex_lock(&sv->lock);
	while (sv->threads > 0)
		pthread_cond_wait(&sv->idle, &sv->lock);
	pthread_mutex_unlock(&sv->lock);
	mcp_close_all(sv);
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
