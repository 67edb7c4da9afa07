/* serve.c — the session row through `ward serve`: what an agent host runs.
 *
 * One `ward serve --isolation shared` is started for the tier, and each
 * measured command is one MCP tools/call of the shell tool on its stdin, timed
 * until the response line is read back: the front door, a fork in the
 * session's one sandbox, the command, and the JSON both ways. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"

struct servecase {
	pid_t pid;
	int in, out;     /* its stdin (a socket, ours to write), its stdout (ours to read) */
	char buf[65536]; /* what was read and not yet taken as a line */
	size_t len;
	unsigned long id;
};

/* The next line of the server's output (without its newline) in line, or -1
 * with why. */
static int read_line(struct servecase *c, char *line, size_t size, char *why, size_t whysz)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		ssize_t n;

		if (nl) {
			size_t k = (size_t)(nl - c->buf);

			if (k >= size) {
				snprintf(why, whysz, "a response of over %zu bytes", size);
				return -1;
			}
			memcpy(line, c->buf, k);
			line[k] = '\0';
			memmove(c->buf, nl + 1, c->len - k - 1);
			c->len -= k + 1;
			return 0;
		}
		if (c->len == sizeof(c->buf)) {
			snprintf(why, whysz, "a response of over %zu bytes", sizeof(c->buf));
			return -1;
		}
		n = read(c->out, c->buf + c->len, sizeof(c->buf) - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(why, whysz, "ward serve ended: %s", n < 0 ? strerror(errno) : "EOF");
			return -1;
		}
		c->len += (size_t)n;
	}
}

/* text and a newline to the server's stdin, a socket: the server gone is
 * EPIPE, not a signal to the bench. */
static int send_line(int fd, const char *text)
{
	char *line;
	size_t off = 0, len;
	int rc = 0;

	if (asprintf(&line, "%s\n", text) < 0)
		return -1;
	len = strlen(line);
	while (off < len) {
		ssize_t k = send(fd, line + off, len - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -1;
			break;
		}
		off += (size_t)k;
	}
	free(line);
	return rc;
}

/* One request, its response's result; NULL with why. */
static json_t *call(struct servecase *c, const char *method, json_t *params, char *why,
		    size_t whysz)
{
	json_t *req = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id",
				(json_int_t)++c->id, "method", method, "params", params);
	char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
	static char line[65536];
	json_t *resp, *result;
	json_error_t jerr;
	int rc;

	json_decref(req);
	if (!text) {
		snprintf(why, whysz, "out of memory");
		return NULL;
	}
	rc = send_line(c->in, text);
	free(text);
	if (rc < 0) {
		snprintf(why, whysz, "write to ward serve: %s", strerror(errno));
		return NULL;
	}
	if (read_line(c, line, sizeof(line), why, whysz) < 0)
		return NULL;
	resp = json_loads(line, 0, &jerr);
	if (!resp) {
		snprintf(why, whysz, "a response that is not JSON: %.100s", line);
		return NULL;
	}
	result = json_object_get(resp, "result");
	if (!json_is_object(result)) {
		json_t *msg = json_object_get(json_object_get(resp, "error"), "message");

		snprintf(why, whysz, "%s: %.200s", method,
			 json_is_string(msg) ? json_string_value(msg) : line);
		json_decref(resp);
		return NULL;
	}
	json_incref(result);
	json_decref(resp);
	return result;
}

void servecase_free(struct servecase *c)
{
	int st;

	if (!c)
		return;
	if (c->in >= 0)
		close(c->in); /* end of input: the server ends its sessions and exits */
	if (c->out >= 0)
		close(c->out);
	if (c->pid > 0 && waitpid(c->pid, &st, 0) < 0)
		kill(c->pid, SIGKILL);
	free(c);
}

struct servecase *servecase_new(const struct tier_options *o, char *why, size_t whysz)
{
	struct servecase *c = calloc(1, sizeof(*c));
	int to[2] = { -1, -1 }, from[2] = { -1, -1 };
	json_t *r;

	if (!c) {
		snprintf(why, whysz, "failed: out of memory");
		return NULL;
	}
	c->in = c->out = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, to) < 0 ||
	    pipe2(from, O_CLOEXEC) < 0) {
		snprintf(why, whysz, "failed: pipe: %s", strerror(errno));
		goto fail;
	}
	c->pid = fork();
	if (c->pid < 0) {
		snprintf(why, whysz, "failed: fork: %s", strerror(errno));
		goto fail;
	}
	if (c->pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(to[0], 0);
		dup2(from[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execl(o->ward, o->ward, "serve", "--policy", o->policy, "-C", o->workdir,
		      "--isolation", "shared", (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	c->in = to[1];
	c->out = from[0];
	to[0] = to[1] = from[0] = from[1] = -1;
	r = call(c, "initialize",
		 json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion", "2025-06-18",
			   "capabilities", "clientInfo", "name", "ward-bench", "version", "1"),
		 why, whysz);
	if (!r) {
		char tmp[BENCH_STATUS_MAX];

		snprintf(tmp, sizeof(tmp), "failed: %s", why);
		snprintf(why, whysz, "%s", tmp);
		goto fail;
	}
	json_decref(r);
	if (send_line(c->in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}") < 0) {
		snprintf(why, whysz, "failed: write to ward serve: %s", strerror(errno));
		goto fail;
	}
	return c;
fail:
	if (to[0] >= 0)
		close(to[0]);
	if (to[1] >= 0)
		close(to[1]);
	if (from[0] >= 0)
		close(from[0]);
	if (from[1] >= 0)
		close(from[1]);
	servecase_free(c);
	return NULL;
}

int servecase_run(struct servecase *c, const char *cmd, char *out, size_t outsz, double *ms)
{
	long long t0 = bench_now_ns();
	json_t *r, *sc;
	int rc = -1;

	r = call(c, "tools/call",
		 json_pack("{s:s, s:{s:s}}", "name", "shell", "arguments", "command", cmd), out,
		 outsz);
	*ms = (double)(bench_now_ns() - t0) / 1e6;
	if (!r)
		return -1;
	sc = json_object_get(r, "structuredContent");
	if (json_is_true(json_object_get(r, "isError")) || !json_is_object(sc)) {
		json_t *text = json_object_get(json_array_get(json_object_get(r, "content"), 0), "text");

		snprintf(out, outsz, "the tool call failed: %.200s",
			 json_is_string(text) ? json_string_value(text) : "(no text)");
	} else {
		json_t *o = json_object_get(sc, "output");

		snprintf(out, outsz, "%s", json_is_string(o) ? json_string_value(o) : "");
		rc = 0;
	}
	json_decref(r);
	return rc;
}
