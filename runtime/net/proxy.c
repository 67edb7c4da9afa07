/* proxy.c — the validating HTTP/CONNECT proxy, driven by the supervisor's
 * event loop (net-internal.h).
 *
 * One connection from the sandbox goes: read the request head → check the
 * host against the policy → resolve (resolver thread) → check every address
 * (destination classes, CIDRs) → connect to an address that passed (never
 * resolving again: no DNS rebinding) → relay. Data moves through a pipe per
 * direction with splice() (64 KiB buffers where it cannot: see struct
 * pipe_flow; a bulk tunnel's pipes grow, see pipe_maybe_grow);
 * level-triggered epoll interest follows what each can take. Refusals are answered by the proxy itself (400/403/502/
 * 504) with a one-line reason. */
#include "runtime/net/net-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>


#include "ward/request.h"
#include "runtime/util/util-internal.h"
#include "ward/netrules.h"

#define BUF_SIZE (64 * 1024)
#define HEAD_READ_MAX (32 * 1024) /* below BUF_SIZE: a rewritten head and what followed it fit */
#define MAX_CONNS 1024
#define MAX_RECORDS 10000
#define HEAD_TIMEOUT_NS (30LL * 1000000000)
#define RESOLVE_TIMEOUT_NS (15LL * 1000000000)
#define CONNECT_TIMEOUT_NS (10LL * 1000000000)
/* After the proxy's own answer, how long what the client still sends is
 * read and dropped (below, S_REPLY). */
#define LINGER_NS (2LL * 1000000000)
/* Bodies collected whole (secrets in force) held at once, all connections
 * together: the supervisor's memory is not the sandbox's cgroup's, and 1024
 * connections of 1 MiB each would be a gigabyte of it. */
#define BODY_BUDGET (16 * 1024 * 1024)
/* The send buffer towards the client (the kernel doubles it); see
 * upstream_ready(). */
#define CLIENT_SNDBUF (128 * 1024)
/* Intercepted connections at once (one thread each; see struct mitm). */
#define MAX_MITM 64

/* ---- the resolver thread ------------------------------------------------ */

struct job {
	struct job *next;
	uint64_t conn_id;
	char host[WARD_NET_HOST_MAX];
	struct addrinfo *res;
	int gai;
};

/* Shared by the proxy and its resolver thread; the last one to let go frees
 * it, so the proxy never waits for a lookup that hangs. */
struct resolver {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int refs;
	bool stop, started;
	struct job *todo, *todo_tail, *done;
	int efd;
};

static void resolver_unref(struct resolver *r)
{
	struct job *j;
	bool last;

	pthread_mutex_lock(&r->mu);
	last = --r->refs == 0;
	pthread_mutex_unlock(&r->mu);
	if (!last)
		return;
	while ((j = r->todo)) {
		r->todo = j->next;
		free(j);
	}
	while ((j = r->done)) {
		r->done = j->next;
		if (j->res)
			freeaddrinfo(j->res);
		free(j);
	}
	close(r->efd);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r);
}

static void *resolver_main(void *arg)
{
	struct resolver *r = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
		struct job *j;

		while (!r->stop && !r->todo)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop)
			break;
		j = r->todo;
		r->todo = j->next;
		if (!r->todo)
			r->todo_tail = NULL;
		pthread_mutex_unlock(&r->mu);
		j->gai = getaddrinfo(j->host, NULL, &hints, &j->res);
		pthread_mutex_lock(&r->mu);
		j->next = r->done;
		r->done = j;
		if (write(r->efd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow here; nothing to do */
		}
	}
	pthread_mutex_unlock(&r->mu);
	resolver_unref(r);
	return NULL;
}

static int resolver_submit(struct resolver *r, uint64_t id, const char *host)
{
	struct job *j = calloc(1, sizeof(*j));

	if (!j)
		return -1;
	j->conn_id = id;
	snprintf(j->host, sizeof(j->host), "%s", host);
	pthread_mutex_lock(&r->mu);
	if (!r->started) {
		pthread_attr_t attr;
		pthread_t th;
		sigset_t all, old;
		int rc;

		/* The thread takes no signals: they are the supervisor's. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		r->refs++;
		rc = pthread_create(&th, &attr, resolver_main, r);
		pthread_attr_destroy(&attr);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc != 0) {
			r->refs--;
			pthread_mutex_unlock(&r->mu);
			free(j);
			errno = rc;
			return -1;
		}
		r->started = true;
	}
	if (r->todo_tail)
		r->todo_tail->next = j;
	else
		r->todo = j;
	r->todo_tail = j;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* ---- connections -------------------------------------------------------- */

enum kind { K_CLIENT, K_UPSTREAM, K_LISTENER, K_HANDOVER, K_RESOLVER };

struct endpoint {
	enum kind kind;
	struct conn *c;
	int fd;
	uint32_t events; /* what epoll watches now */
};

enum state { S_HEAD, S_BODY, S_RESOLVE, S_CONNECT, S_RELAY, S_REPLY };

struct buffer {
	char *data;
	size_t start, end;
};

/* Relayed data moves socket -> pipe -> socket with splice(), without a
 * copy through the proxy; a direction without a pipe (the request of a
 * forwarded HTTP request, whose body is delimited byte by byte, or when no
 * pipe could be made) uses its buffer. The buffer is always sent first: it
 * holds what the proxy itself says ("200 Connection established") and what
 * came with the request head. */
struct pipe_flow {
	int fd[2];
	size_t n;     /* bytes in the pipe */
	bool full;    /* the last splice in found no room: wait for a drain */
	bool sized;   /* the grow decision was taken (pipe_maybe_grow) */
	size_t grown; /* the capacity it was given, counted in the proxy's budget; 0: default */
};

struct conn {
	struct conn *next, *prev;
	uint64_t id;
	enum state st;
	struct endpoint cl, up;
	struct buffer head;        /* the client's bytes until the head is complete */
	struct buffer to_up, to_cl;
	struct pipe_flow up_pipe, cl_pipe; /* towards the upstream, towards the client */
	bool cl_eof, up_eof, cl_shut, up_shut;
	bool cl_done;              /* the request is forwarded: read no more from the client */
	bool http;                 /* a forwarded request, not a tunnel */
	struct ward_http_body body;
	struct ward_chunked chunk;
	uint64_t body_left;
	struct ward_http_request req;
	struct sockaddr_storage *addrs;
	size_t n_addrs, next_addr;
	char allow_rule[WARD_NET_RULE_MAX];
	long long deadline;
	long long started_ns;
	bool dead;
	bool handed;               /* given to a mitm thread, which records it */
	size_t own_bytes;          /* the proxy's "200 Connection established", not upstream data */
	struct ward_net_record rec;
	char *body_buf;            /* S_BODY: the whole body, for the secrets' rules */
	size_t body_len;
	bool status_seen;          /* the upstream's status line was looked at */
};

struct ward_proxy {
	int ep;
	struct ward_netpolicy policy;
	struct ward_netrules *rules;      /* credentials, secrets, request rules */
	struct sockaddr_storage *own;
	size_t n_own;
	int log_fd;
	struct resolver *res;
	struct endpoint res_ep;
	struct endpoint *listeners[8];
	size_t n_listeners;
	struct endpoint *handover;
	struct conn *conns, *dead;
	size_t n_conns;
	bool paused;                      /* out of fds: listeners not watched */
	uint64_t next_id;
	struct ward_net_record *records;
	size_t n_records, cap_records;
	size_t pipe_big;    /* a bulk tunnel's pipe capacity */
	size_t pipe_budget; /* bytes all grown pipes together may hold */
	size_t pipe_grown;  /* bytes they hold now */
	struct ward_tlshelper *tls;       /* the run's TLS helper, once started */
	pthread_mutex_t mu;               /* records and the log, shared with mitm threads */
	struct mitm *mitms;               /* intercepted connections, each on its thread */
	size_t n_mitms;
	size_t body_held;   /* bytes of bodies being collected (BODY_BUDGET) */
};

static int64_t unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void set_events(struct ward_proxy *p, struct endpoint *e, uint32_t ev)
{
	struct epoll_event x = { .events = ev, .data.ptr = e };

	if (e->fd < 0 || e->events == ev)
		return;
	if (epoll_ctl(p->ep, EPOLL_CTL_MOD, e->fd, &x) == 0)
		e->events = ev;
}

static int watch(struct ward_proxy *p, struct endpoint *e, uint32_t ev)
{
	struct epoll_event x = { .events = ev, .data.ptr = e };

	if (epoll_ctl(p->ep, EPOLL_CTL_ADD, e->fd, &x) < 0)
		return -1;
	e->events = ev;
	return 0;
}

static void close_endpoint(struct ward_proxy *p, struct endpoint *e)
{
	if (e->fd < 0)
		return;
	epoll_ctl(p->ep, EPOLL_CTL_DEL, e->fd, NULL);
	close(e->fd);
	e->fd = -1;
}

/* A record's text as a JSON string. A rule may quote the sandbox's bytes
 * (a request target, a ClientHello's name) or be cut inside a character:
 * json_string() refuses what is not UTF-8, and the key would be missing
 * from the record — the sandbox choosing which refusals leave no reason. */
static json_t *record_text(const char *s)
{
	json_t *j = json_string(s);
	char *clean;

	if (j)
		return j;
	clean = ward_utf8_sanitize(s, strlen(s), NULL);
	j = json_string(clean ? clean : "");
	free(clean);
	return j;
}

json_t *ward_net_record_json(const struct ward_net_record *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "time_ms", json_integer(r->time_ms));
	json_object_set_new(o, "method", record_text(r->method));
	json_object_set_new(o, "host", record_text(r->host));
	json_object_set_new(o, "port", r->port ? json_integer(r->port) : json_null());
	json_object_set_new(o, "decision", record_text(r->decision));
	json_object_set_new(o, "rule", record_text(r->rule));
	json_object_set_new(o, "address", r->address[0] ? json_string(r->address) : json_null());
	json_object_set_new(o, "status", r->status ? json_integer(r->status) : json_null());
	json_object_set_new(o, "bytes_up", json_integer((json_int_t)r->bytes_up));
	json_object_set_new(o, "bytes_down", json_integer((json_int_t)r->bytes_down));
	json_object_set_new(o, "duration_ms", json_integer(r->duration_ms));
	json_object_set_new(o, "path", r->path[0] ? json_string(r->path) : json_null());
	json_object_set_new(o, "request_rule",
			    r->request_rule[0] ? json_string(r->request_rule) : json_null());
	{
		json_t *a = json_array();
		const char *s = r->secrets;

		while (*s) {
			size_t n = strcspn(s, ",");

			json_array_append_new(a, json_stringn(s, n));
			s += n + (s[n] == ',');
		}
		json_object_set_new(o, "secrets", a);
	}
	return o;
}

/* One finished record into the result and the log; mitm threads call it
 * too, hence the lock. */
static void store_record(struct ward_proxy *p, const struct ward_net_record *r)
{
	pthread_mutex_lock(&p->mu);
	if (p->log_fd >= 0) {
		json_t *o = ward_net_record_json(r);
		char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

		json_decref(o);
		if (s) {
			size_t n = strlen(s);

			s[n] = '\n'; /* one write per line: O_APPEND keeps lines whole */
			if (ward_write_all(p->log_fd, s, n + 1) < 0) {
				/* the audit log is best effort; the result has every record */
			}
			free(s);
		}
	}
	if (p->n_records == MAX_RECORDS)
		goto out;
	if (p->n_records == p->cap_records) {
		size_t cap = p->cap_records ? p->cap_records * 2 : 16;
		struct ward_net_record *g = realloc(p->records, cap * sizeof(*g));

		if (!g)
			goto out;
		p->records = g;
		p->cap_records = cap;
	}
	p->records[p->n_records++] = *r;
out:
	pthread_mutex_unlock(&p->mu);
}

static void record(struct ward_proxy *p, struct conn *c)
{
	struct ward_net_record *r = &c->rec;

	if (!r->decision[0])
		snprintf(r->decision, sizeof(r->decision), "error");
	r->bytes_down = r->bytes_down > c->own_bytes ? r->bytes_down - c->own_bytes : 0;
	r->duration_ms = (ward_now_ns() - c->started_ns) / 1000000;
	store_record(p, r);
}

static void pipe_close(struct ward_proxy *p, struct pipe_flow *f)
{
	if (f->fd[0] >= 0) {
		close(f->fd[0]);
		close(f->fd[1]);
	}
	f->fd[0] = f->fd[1] = -1;
	f->n = 0;
	p->pipe_grown -= f->grown;
	f->grown = 0;
}

static void body_drop(struct ward_proxy *p, struct conn *c)
{
	p->body_held -= c->body_len;
	c->body_len = 0;
	free(c->body_buf);
	c->body_buf = NULL;
}

static void conn_kill(struct ward_proxy *p, struct conn *c)
{
	if (c->dead)
		return;
	c->dead = true;
	if (!c->handed)
		record(p, c);
	close_endpoint(p, &c->cl);
	close_endpoint(p, &c->up);
	pipe_close(p, &c->up_pipe);
	pipe_close(p, &c->cl_pipe);
	body_drop(p, c);
	if (p->paused) {
		/* a connection's fds are free again: accept again */
		for (size_t i = 0; i < p->n_listeners; i++)
			set_events(p, p->listeners[i], EPOLLIN);
		p->paused = false;
	}
	/* off the live list, onto the dead one: events of this round may still
	 * point at it */
	if (c->prev)
		c->prev->next = c->next;
	else
		p->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = p->dead;
	p->dead = c;
	p->n_conns--;
}

static void conn_free(struct conn *c)
{
	free(c->head.data);
	free(c->to_up.data);
	free(c->to_cl.data);
	free(c->addrs);
	free(c->body_buf);
	free(c);
}

static const char *status_text(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 405:
		return "Method Not Allowed";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	}
	return "Error";
}

static bool buf_alloc(struct buffer *b)
{
	if (!b->data)
		b->data = malloc(BUF_SIZE);
	return b->data != NULL;
}

/* Answer the client ourselves and close after: status and one line. */
static void reply(struct ward_proxy *p, struct conn *c, int status, const char *decision,
		  const char *reason)
{
	int n;

	snprintf(c->rec.decision, sizeof(c->rec.decision), "%s", decision);
	if (reason != c->rec.rule)
		snprintf(c->rec.rule, sizeof(c->rec.rule), "%s", reason);
	c->rec.status = status;
	close_endpoint(p, &c->up);
	body_drop(p, c); /* the budget is free for others while it lingers */
	if (!buf_alloc(&c->to_cl)) {
		conn_kill(p, c);
		return;
	}
	n = snprintf(c->to_cl.data, BUF_SIZE,
		     "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
		     "Content-Length: %zu\r\n\r\nward proxy: %s\n",
		     status, status_text(status), strlen(reason) + 13, reason);
	c->to_cl.start = 0;
	c->to_cl.end = n < BUF_SIZE ? (size_t)n : BUF_SIZE;
	c->st = S_REPLY;
	c->deadline = ward_now_ns() + CONNECT_TIMEOUT_NS;
}

static void start_connect(struct ward_proxy *p, struct conn *c);
static void mitm_start(struct ward_proxy *p, struct conn *c);

static void upstream_ready(struct ward_proxy *p, struct conn *c)
{
	const struct sockaddr_storage *a = &c->addrs[c->next_addr - 1];

	ward_addr_text((const struct sockaddr *)a, c->rec.address, sizeof(c->rec.address));
	snprintf(c->rec.decision, sizeof(c->rec.decision), "allow");
	snprintf(c->rec.rule, sizeof(c->rec.rule), "%s", c->allow_rule);
	if (!c->http && ward_netpolicy_intercepts(&p->policy, c->req.host)) {
		mitm_start(p, c);
		return;
	}
	c->st = S_RELAY;
	c->deadline = 0;
	if (!buf_alloc(&c->to_up) || !buf_alloc(&c->to_cl)) {
		conn_kill(p, c);
		return;
	}
	{
		int one = 1, snd = CLIENT_SNDBUF;

		setsockopt(c->up.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		/* The client's end is always local (the sandbox's veth or its
		 * loopback), microseconds away: a fixed 256 KiB send buffer
		 * keeps that leg at full speed. Autotuned, it grows to
		 * megabytes of relayed data queued between proxy and client,
		 * out of the CPUs' caches by the time the client copies them:
		 * on a 1 GiB download that cost the three processes about a
		 * quarter more CPU time per byte. The upstream's leg keeps
		 * autotuning (a real path has a real bandwidth-delay product).
		 * A failure leaves the default. */
		setsockopt(c->cl.fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
	}
	/* without a pipe (out of fds), the buffers do the same job */
	if (pipe2(c->cl_pipe.fd, O_CLOEXEC | O_NONBLOCK) < 0)
		c->cl_pipe.fd[0] = c->cl_pipe.fd[1] = -1;
	if (!c->http && pipe2(c->up_pipe.fd, O_CLOEXEC | O_NONBLOCK) < 0)
		c->up_pipe.fd[0] = c->up_pipe.fd[1] = -1;
	if (!c->http) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

		memcpy(c->to_cl.data, ok, sizeof(ok) - 1);
		c->to_cl.end = sizeof(ok) - 1;
		c->own_bytes = sizeof(ok) - 1;
		c->rec.status = 200;
	}
}

static void try_next_address(struct ward_proxy *p, struct conn *c, int error)
{
	close_endpoint(p, &c->up);
	if (c->next_addr < c->n_addrs) {
		start_connect(p, c);
		return;
	}
	{
		char reason[WARD_NET_RULE_MAX], addr[64];

		ward_addr_text((const struct sockaddr *)&c->addrs[c->next_addr - 1], addr,
			       sizeof(addr));
		snprintf(reason, sizeof(reason), "connect to %s port %u: %s", addr, c->req.port,
			 strerror(error));
		reply(p, c, error == ETIMEDOUT ? 504 : 502, "error", reason);
	}
}

static void start_connect(struct ward_proxy *p, struct conn *c)
{
	struct sockaddr_storage *a = &c->addrs[c->next_addr++];
	socklen_t len = a->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
						  sizeof(struct sockaddr_in6);
	int fd;

	if (a->ss_family == AF_INET)
		((struct sockaddr_in *)a)->sin_port = htons(c->req.port);
	else
		((struct sockaddr_in6 *)a)->sin6_port = htons(c->req.port);
	fd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		try_next_address(p, c, errno);
		return;
	}
	c->up.fd = fd;
	if (watch(p, &c->up, EPOLLOUT) < 0) {
		int e = errno;

		close(fd);
		c->up.fd = -1;
		try_next_address(p, c, e);
		return;
	}
	c->st = S_CONNECT;
	c->deadline = ward_now_ns() + CONNECT_TIMEOUT_NS;
	if (connect(fd, (struct sockaddr *)a, len) == 0) {
		upstream_ready(p, c);
		return;
	}
	if (errno != EINPROGRESS)
		try_next_address(p, c, errno);
}

/* The addresses a lookup gave, checked; connect to the first that passes. */
static void addresses_known(struct ward_proxy *p, struct conn *c, const struct addrinfo *ai)
{
	char refused[WARD_NET_RULE_MAX] = "", why[WARD_NET_RULE_MAX];
	size_t n = 0;

	for (const struct addrinfo *x = ai; x; x = x->ai_next)
		n++;
	free(c->addrs);
	c->addrs = calloc(n ? n : 1, sizeof(*c->addrs));
	c->n_addrs = 0;
	if (!c->addrs) {
		reply(p, c, 500, "error", "out of memory");
		return;
	}
	for (const struct addrinfo *x = ai; x; x = x->ai_next) {
		size_t k;
		bool dup = false;

		if (x->ai_family != AF_INET && x->ai_family != AF_INET6)
			continue;
		if (!ward_netpolicy_check_addr(&p->policy, x->ai_addr, p->own, p->n_own, why,
					       sizeof(why))) {
			if (!refused[0])
				snprintf(refused, sizeof(refused), "%s", why);
			continue;
		}
		for (k = 0; k < c->n_addrs; k++)
			dup = dup || memcmp(&c->addrs[k], x->ai_addr, x->ai_addrlen) == 0;
		if (dup)
			continue;
		memcpy(&c->addrs[c->n_addrs++], x->ai_addr, x->ai_addrlen);
		if (why[0] && !strstr(c->allow_rule, why)) {
			size_t l = strlen(c->allow_rule);

			snprintf(c->allow_rule + l, sizeof(c->allow_rule) - l, "; %s", why);
		}
	}
	if (c->n_addrs == 0) {
		/* Any refused address refuses the name: answer 403 with the reason. */
		reply(p, c, 403, "deny", refused[0] ? refused : "no usable address");
		return;
	}
	c->next_addr = 0;
	start_connect(p, c);
}

/* Resolve the host, or take its literal address. */
static void go_upstream(struct ward_proxy *p, struct conn *c)
{
	struct ward_http_request *r = &c->req;

	if (r->literal) {
		struct addrinfo ai = { 0 };
		struct sockaddr_storage ss = { 0 };

		if (inet_pton(AF_INET, r->host, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
			ss.ss_family = AF_INET;
			ai.ai_addrlen = sizeof(struct sockaddr_in);
		} else {
			inet_pton(AF_INET6, r->host, &((struct sockaddr_in6 *)&ss)->sin6_addr);
			ss.ss_family = AF_INET6;
			ai.ai_addrlen = sizeof(struct sockaddr_in6);
		}
		ai.ai_family = ss.ss_family;
		ai.ai_addr = (struct sockaddr *)&ss;
		addresses_known(p, c, &ai);
		return;
	}
	if (resolver_submit(p->res, c->id, r->host) < 0) {
		reply(p, c, 502, "error", "cannot start name resolution");
		return;
	}
	c->st = S_RESOLVE;
	c->deadline = ward_now_ns() + RESOLVE_TIMEOUT_NS;
}

/* The rules' verdict (ward/netrules.h): into the record; a refusal
 * answered. false when refused. */
static bool judged(struct ward_proxy *p, struct conn *c, const struct ward_netrules_verdict *v)
{
	snprintf(c->rec.path, sizeof(c->rec.path), "%s", v->path);
	snprintf(c->rec.request_rule, sizeof(c->rec.request_rule), "%s", v->rule);
	snprintf(c->rec.secrets, sizeof(c->rec.secrets), "%s", v->secrets);
	if (!v->allow)
		reply(p, c, v->status, v->status == 500 ? "error" : "deny", v->reason);
	return v->allow;
}

/* What the rules made of a forwarded request becomes what goes upstream
 * first; the buffer keeps at least BUF_SIZE for what follows. */
static bool take_out(struct conn *c, struct ward_netrules_verdict *v)
{
	char *g = realloc(v->out, v->out_len > BUF_SIZE ? v->out_len : BUF_SIZE);

	if (!g)
		return false;
	free(c->to_up.data);
	c->to_up.data = g;
	c->to_up.start = 0;
	c->to_up.end = v->out_len;
	v->out = NULL;
	if (v->credential) {
		size_t l = strlen(c->allow_rule);

		snprintf(c->allow_rule + l, sizeof(c->allow_rule) - l, "; credential added");
	}
	return true;
}

/* Bytes of a body collected whole (S_BODY: secrets are in force); at its
 * end, the rules judge head and body together. */
static void body_bytes(struct ward_proxy *p, struct conn *c, const char *data, size_t n)
{
	struct ward_netrules_verdict v;
	bool done = false;
	size_t take = n;

	if (c->body.chunked) {
		ssize_t k = ward_chunked_feed(&c->chunk, data, n, &done);

		if (k < 0) {
			reply(p, c, 400, "deny", "malformed chunked body");
			return;
		}
		take = (size_t)k;
	} else {
		if (take > c->body.length - c->body_len)
			take = (size_t)(c->body.length - c->body_len);
		done = c->body_len + take == c->body.length;
	}
	if (c->body_len + take > WARD_NETRULES_BODY_MAX) {
		reply(p, c, 413, "deny", "request body larger than 1 MiB while secrets are in force");
		return;
	}
	if (p->body_held + take > BODY_BUDGET) {
		reply(p, c, 503, "error", "too many request bodies held at once (secrets in force)");
		return;
	}
	if (take) {
		char *g = realloc(c->body_buf, c->body_len + take);

		if (!g) {
			reply(p, c, 500, "error", "out of memory");
			return;
		}
		c->body_buf = g;
		memcpy(c->body_buf + c->body_len, data, take);
		c->body_len += take;
		p->body_held += take;
	}
	if (!done)
		return;
	ward_netrules_request(p->rules, &c->req, c->head.data, c->body_buf, c->body_len, true, &v);
	body_drop(p, c);
	if (judged(p, c, &v)) {
		if (take_out(c, &v)) {
			c->cl_done = true;
			c->body_left = 0;
			go_upstream(p, c);
		} else {
			reply(p, c, 500, "error", "out of memory");
		}
	}
	ward_netrules_verdict_release(&v);
}

static void read_body(struct ward_proxy *p, struct conn *c)
{
	char buf[BUF_SIZE];
	ssize_t n = read(c->cl.fd, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		snprintf(c->rec.rule, sizeof(c->rec.rule), "client closed in the middle of its body");
		conn_kill(p, c);
		return;
	}
	body_bytes(p, c, buf, (size_t)n);
}

/* A client that sent "Expect: 100-continue" waits for the go-ahead before
 * its body, which the proxy wants whole before anything goes upstream: the
 * proxy gives it (a few bytes to a fresh socket; if they do not fit, the
 * client sends after its own timeout anyway). */
static void expect_continue(struct conn *c)
{
	static const char go[] = "HTTP/1.1 100 Continue\r\n\r\n";
	const char *h = c->head.data, *end = h + c->req.head_len;

	for (const char *l = memmem(h, c->req.head_len, "\r\n", 2); l && l + 2 < end;
	     l = memmem(l + 2, (size_t)(end - l - 2), "\r\n", 2)) {
		if ((size_t)(end - l) > 9 && strncasecmp(l + 2, "expect:", 7) == 0) {
			const char *v = l + 9;

			while (*v == ' ' || *v == '\t')
				v++;
			if (strncasecmp(v, "100-continue", 12) == 0 &&
			    send(c->cl.fd, go, sizeof(go) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				/* the client's own timeout sends the body anyway */
			}
			return;
		}
	}
}

static void head_complete(struct ward_proxy *p, struct conn *c)
{
	struct ward_http_request *r = &c->req;
	struct ward_netrules_verdict v;
	char reason[WARD_NET_RULE_MAX];

	snprintf(c->rec.method, sizeof(c->rec.method), "%s", r->method);
	snprintf(c->rec.host, sizeof(c->rec.host), "%s", r->host);
	c->rec.port = r->port;
	if (!ward_netpolicy_check_host(&p->policy, r->host, r->port, reason, sizeof(reason))) {
		reply(p, c, 403, "deny", reason);
		return;
	}
	snprintf(c->allow_rule, sizeof(c->allow_rule), "%s", reason);
	c->http = !r->is_connect;
	/* secrets, credentials, request rules: one verdict (ward/netrules.h) */
	ward_netrules_request(p->rules, r, c->head.data, NULL, 0, false, &v);
	if (!judged(p, c, &v)) {
		ward_netrules_verdict_release(&v);
		return;
	}
	if (v.need_body) {
		c->body = v.framing;
		ward_netrules_verdict_release(&v);
		c->st = S_BODY;
		expect_continue(c);
		body_bytes(p, c, c->head.data + r->head_len, c->head.end - r->head_len);
		return;
	}
	if (c->http) {
		if (v.out_len > BUF_SIZE || !take_out(c, &v)) {
			ward_netrules_verdict_release(&v);
			reply(p, c, 431, "deny", "request head too large");
			return;
		}
		c->body = v.framing;
		c->body_left = c->body.length;
	} else if (!buf_alloc(&c->to_up)) {
		ward_netrules_verdict_release(&v);
		reply(p, c, 500, "error", "out of memory");
		return;
	}
	ward_netrules_verdict_release(&v);
	/* What came after the head: a body's start, or a tunnel's first bytes. */
	{
		const char *rest = c->head.data + r->head_len;
		size_t n = c->head.end - r->head_len;

		if (c->http) {
			if (c->body.chunked) {
				bool done = false;
				ssize_t k = n ? ward_chunked_feed(&c->chunk, rest, n, &done) : 0;

				if (k < 0) {
					reply(p, c, 400, "deny", "malformed chunked body");
					return;
				}
				n = (size_t)k;
				c->cl_done = done;
			} else {
				if (n > c->body_left)
					n = (size_t)c->body_left;
				c->body_left -= n;
				c->cl_done = c->body_left == 0;
			}
		}
		if (c->to_up.end + n > BUF_SIZE) {
			reply(p, c, 431, "deny", "request head too large");
			return;
		}
		memcpy(c->to_up.data + c->to_up.end, rest, n);
		c->to_up.end += n;
	}
	go_upstream(p, c);
}

static void read_head(struct ward_proxy *p, struct conn *c)
{
	char reason[WARD_NET_RULE_MAX];
	int status, rc;
	ssize_t n;

	if (!buf_alloc(&c->head)) {
		conn_kill(p, c);
		return;
	}
	n = read(c->cl.fd, c->head.data + c->head.end, HEAD_READ_MAX - c->head.end);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		snprintf(c->rec.rule, sizeof(c->rec.rule), "client closed before a request");
		conn_kill(p, c);
		return;
	}
	c->head.end += (size_t)n;
	rc = ward_http_parse_request(c->head.data, c->head.end, &c->req, &status, reason,
				     sizeof(reason));
	if (rc == 0 && c->head.end == HEAD_READ_MAX) {
		rc = -1;
		status = 431;
		snprintf(reason, sizeof(reason), "request head larger than %d bytes", HEAD_READ_MAX);
	}
	if (rc < 0) {
		/* what can be said about it, for the record */
		size_t m = strcspn(c->head.data, " \r\n");

		if (m < sizeof(c->rec.method) && m < c->head.end)
			snprintf(c->rec.method, sizeof(c->rec.method), "%.*s", (int)m, c->head.data);
		reply(p, c, status, "deny", reason);
		return;
	}
	if (rc == 1)
		head_complete(p, c);
}

/* Move bytes from fd into b; returns false at end of file or error. */
static bool fill(int fd, struct buffer *b, bool *eof)
{
	ssize_t n;

	if (b->start == b->end)
		b->start = b->end = 0;
	if (b->end == BUF_SIZE)
		return true;
	n = read(fd, b->data + b->end, BUF_SIZE - b->end);
	if (n > 0) {
		b->end += (size_t)n;
		return true;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	*eof = true;
	return n == 0;
}

/* Read and drop what fd has, 256 KiB at most a call (a client that never
 * stops sending does not hold up the loop); false at its end or on an
 * error. */
static bool discard(int fd)
{
	char sink[16384];

	for (int i = 0; i < 16; i++) {
		ssize_t n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno == EAGAIN;
	}
	return true;
}

/* Write what b holds to fd; false on error. */
static bool drain(int fd, struct buffer *b, uint64_t *count)
{
	while (b->start < b->end) {
		ssize_t n = send(fd, b->data + b->start, b->end - b->start, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			return false;
		b->start += (size_t)n;
		*count += (uint64_t)n;
	}
	b->start = b->end = 0;
	return true;
}

/* Pipe sizing. Each direction starts with the kernel's default pipe
 * (64 KiB); on loopback a bulk transfer then costs a wake-up and a context
 * switch per pipe-full, and a 1 MiB pipe cuts the proxy's CPU per byte by
 * about 40 %. Big pipes are charged to the user's pipe memory, and past
 * /proc/sys/fs/pipe-user-pages-soft the kernel gives an unprivileged user's
 * new pipes a single page (every sandbox of that user, not only this proxy).
 * So a direction grows only once it has carried WARD_PIPE_GROW_AFTER bytes (a
 * download, not a request or a TLS handshake), once, and only while all
 * grown pipes of the proxy fit in a quarter of the soft limit: with the
 * default 64 MiB limit, 16 bulk tunnels at once get 1 MiB pipes, the rest
 * keep the default. A failed resize leaves the pipe as it was. */
/* one splice call moves what a (grown) pipe can hold; the kernel stops at
 * the pipe's free room and at what the socket has queued */
#define SPLICE_LEN WARD_PIPE_BIG_MAX
#define PIPE_DEFAULT (64 * 1024)

void ward_pipe_policy(long max_size, long soft_pages, long page, size_t *big, size_t *budget)
{
	if (page <= 0)
		page = 4096;
	/* an unprivileged caller may not exceed pipe-max-size */
	*big = max_size > 0 && max_size < WARD_PIPE_BIG_MAX ? (size_t)max_size : WARD_PIPE_BIG_MAX;
	*budget = soft_pages > 0 ? (size_t)soft_pages * (size_t)page / 4
				 : WARD_PIPE_BUDGET_UNLIMITED;
}

size_t ward_proxy_env(const struct ward_proxy *p, const char **out, size_t max)
{
	size_t i, n = ward_netrules_n_secrets(p->rules);

	for (i = 0; i < n && i < max; i++)
		out[i] = ward_netrules_env(p->rules, i);
	return i;
}

size_t ward_pipe_grow_size(uint64_t moved, size_t grown, size_t big, size_t budget)
{
	if (moved < WARD_PIPE_GROW_AFTER || big <= PIPE_DEFAULT || grown + big > budget)
		return 0;
	return big;
}

static long read_proc_long(const char *path, long fallback)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return fallback;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return fallback;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

static void pipe_policy_init(struct ward_proxy *p)
{
	ward_pipe_policy(read_proc_long("/proc/sys/fs/pipe-max-size", WARD_PIPE_BIG_MAX),
			 read_proc_long("/proc/sys/fs/pipe-user-pages-soft", 16384),
			 sysconf(_SC_PAGESIZE), &p->pipe_big, &p->pipe_budget);
}

/* After a direction has moved `moved` bytes: give its pipe the big size
 * when it is a bulk transfer and the budget allows. */
static void pipe_maybe_grow(struct ward_proxy *p, struct pipe_flow *f, uint64_t moved)
{
	size_t want;
	int got;

	if (f->sized || f->fd[0] < 0 || moved < WARD_PIPE_GROW_AFTER)
		return;
	f->sized = true;
	want = ward_pipe_grow_size(moved, p->pipe_grown, p->pipe_big, p->pipe_budget);
	if (!want)
		return;
	got = fcntl(f->fd[1], F_SETPIPE_SZ, (int)want);
	if (got <= 0)
		return; /* EPERM past the soft limit, ENOMEM: the default pipe still works */
	f->grown = (size_t)got;
	p->pipe_grown += f->grown;
}

/* src -> the direction's pipe, or its buffer. false on a read error
 * (*eof is then set too). */
static bool flow_in(int src, struct buffer *b, struct pipe_flow *f, bool *eof)
{
	ssize_t n;

	if (f->fd[0] < 0)
		return fill(src, b, eof);
	if (f->full)
		return true;
	n = splice(src, NULL, f->fd[1], NULL, SPLICE_LEN, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	if (n > 0) {
		f->n += (size_t)n;
		return true;
	}
	if (n == 0) {
		*eof = true;
		return true;
	}
	if (errno == EINTR)
		return true;
	if (errno == EAGAIN) {
		/* either nothing to read or no room in the pipe; with bytes in
		 * it, assume no room (a drain clears this) so that a readable
		 * socket does not spin the loop */
		f->full = f->n > 0;
		return true;
	}
	*eof = true;
	return false;
}

/* The buffer, then the pipe, -> dst. false on a write error. */
static bool flow_out(int dst, struct buffer *b, struct pipe_flow *f, uint64_t *count)
{
	if (!drain(dst, b, count))
		return false;
	if (b->start < b->end || f->fd[0] < 0)
		return true;
	while (f->n) {
		ssize_t n = splice(f->fd[0], NULL, dst, NULL, f->n, SPLICE_F_NONBLOCK | SPLICE_F_MOVE);

		if (n > 0) {
			f->n -= (size_t)n;
			*count += (uint64_t)n;
			f->full = false;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 && errno == EAGAIN;
	}
	return true;
}

static bool flow_pending(const struct buffer *b, const struct pipe_flow *f)
{
	return b->start < b->end || f->n > 0;
}

static bool flow_room(const struct buffer *b, const struct pipe_flow *f)
{
	return f->fd[0] >= 0 ? !f->full : b->end < BUF_SIZE;
}

/* Bytes just read from the client for a forwarded request: cut at the
 * body's end (anything after it is not forwarded). */
static bool clip_body(struct conn *c, size_t before)
{
	size_t n = c->to_up.end - before;

	if (!c->http)
		return true;
	if (c->cl_done) {
		c->to_up.end = before;
		return true;
	}
	if (c->body.chunked) {
		bool done = false;
		ssize_t k = ward_chunked_feed(&c->chunk, c->to_up.data + before, n, &done);

		if (k < 0)
			return false;
		c->to_up.end = before + (size_t)k;
		c->cl_done = done;
	} else {
		if (n > c->body_left)
			n = (size_t)c->body_left;
		c->body_left -= n;
		c->to_up.end = before + n;
		c->cl_done = c->body_left == 0;
	}
	return true;
}

static void update_interest(struct ward_proxy *p, struct conn *c)
{
	uint32_t cl = 0, up = 0;

	switch (c->st) {
	case S_HEAD:
	case S_BODY:
		cl = EPOLLIN;
		break;
	case S_RESOLVE:
		cl = 0;
		break;
	case S_CONNECT:
		up = EPOLLOUT;
		break;
	case S_REPLY:
		cl = EPOLLIN | (c->to_cl.start < c->to_cl.end ? EPOLLOUT : 0);
		break;
	case S_RELAY:
		if (!c->cl_eof && !c->cl_done && flow_room(&c->to_up, &c->up_pipe))
			cl |= EPOLLIN;
		if (flow_pending(&c->to_cl, &c->cl_pipe))
			cl |= EPOLLOUT;
		if (!c->up_eof && flow_room(&c->to_cl, &c->cl_pipe))
			up |= EPOLLIN;
		if (flow_pending(&c->to_up, &c->up_pipe))
			up |= EPOLLOUT;
		break;
	}
	set_events(p, &c->cl, cl);
	set_events(p, &c->up, up);
}

/* After I/O in relay: half-close and finish as the ends say. */
static void relay_progress(struct ward_proxy *p, struct conn *c)
{
	pipe_maybe_grow(p, &c->cl_pipe, c->rec.bytes_down);
	pipe_maybe_grow(p, &c->up_pipe, c->rec.bytes_up);
	if (c->up.fd < 0) {
		/* the upstream is gone: nothing reaches it */
		c->to_up.start = c->to_up.end = 0;
		c->up_pipe.n = 0;
	}
	bool up_sent = !flow_pending(&c->to_up, &c->up_pipe),
	     cl_sent = !flow_pending(&c->to_cl, &c->cl_pipe);

	if (c->cl_eof && up_sent && !c->up_shut && !c->http) {
		shutdown(c->up.fd, SHUT_WR);
		c->up_shut = true;
	}
	if (c->up_eof && cl_sent) {
		/* The upstream is done and all it sent was delivered. A tunnel
		 * half-closes and waits for the client; a forwarded request is
		 * complete. */
		if (c->http || c->cl_eof) {
			conn_kill(p, c);
			return;
		}
		if (!c->cl_shut) {
			shutdown(c->cl.fd, SHUT_WR);
			c->cl_shut = true;
		}
	}
	if (c->cl_eof && c->http && !c->cl_done) {
		/* the client gave up in the middle of its request */
		conn_kill(p, c);
		return;
	}
	if (c->cl_eof && c->up_eof && up_sent && cl_sent)
		conn_kill(p, c);
}

static void on_client(struct ward_proxy *p, struct conn *c, uint32_t ev)
{
	switch (c->st) {
	case S_HEAD:
		if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
			read_head(p, c);
		return;
	case S_BODY:
		if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
			read_body(p, c);
		return;
	case S_REPLY:
		/* The proxy's own answer, often to a request it did not read
		 * to the end (refused, or a body past the budget). Closed with
		 * that unread, the socket would send a reset, which may destroy
		 * the answer before the client reads it: the answer goes out,
		 * then an end of stream, and what the client still sends is
		 * read and dropped until it closes too (or LINGER_NS passes). */
		if (!drain(c->cl.fd, &c->to_cl, &c->rec.bytes_down) ||
		    ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !discard(c->cl.fd))) {
			c->rec.bytes_down = 0; /* the proxy's own answer is no upstream data */
			conn_kill(p, c);
			return;
		}
		if (c->to_cl.start == c->to_cl.end && !c->cl_shut) {
			c->rec.bytes_down = 0;
			shutdown(c->cl.fd, SHUT_WR);
			c->cl_shut = true;
			c->deadline = ward_now_ns() + LINGER_NS;
		}
		return;
	case S_RESOLVE:
	case S_CONNECT:
		if (ev & (EPOLLHUP | EPOLLERR)) {
			snprintf(c->rec.rule, sizeof(c->rec.rule), "client went away");
			conn_kill(p, c);
		}
		return;
	case S_RELAY:
		break;
	}
	if (ev & EPOLLOUT) {
		if (!flow_out(c->cl.fd, &c->to_cl, &c->cl_pipe, &c->rec.bytes_down)) {
			conn_kill(p, c);
			return;
		}
	}
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->cl_eof && !c->cl_done) {
		size_t before = c->to_up.end;

		if (!flow_in(c->cl.fd, &c->to_up, &c->up_pipe, &c->cl_eof)) {
			conn_kill(p, c);
			return;
		}
		if (!clip_body(c, before)) {
			conn_kill(p, c);
			return;
		}
		if (flow_pending(&c->to_up, &c->up_pipe) &&
		    !flow_out(c->up.fd, &c->to_up, &c->up_pipe, &c->rec.bytes_up)) {
			conn_kill(p, c);
			return;
		}
	}
	/* Level-triggered hang-ups fire until the fd is gone: a client that
	 * closed both ways can take nothing more. */
	if ((ev & (EPOLLHUP | EPOLLERR)) && (c->cl_eof || c->cl_done)) {
		conn_kill(p, c);
		return;
	}
	relay_progress(p, c);
}

/* A forwarded request's status, for the record: the upstream's status line
 * looked at before it is spliced on. */
static void peek_status(struct conn *c)
{
	char b[16];
	ssize_t n = recv(c->up.fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	c->status_seen = n < 0 || n >= 12;
	if (n >= 12 && memcmp(b, "HTTP/1.", 7) == 0 && b[8] == ' ' && b[9] >= '1' &&
	    b[9] <= '5' && b[10] >= '0' && b[10] <= '9' && b[11] >= '0' && b[11] <= '9')
		c->rec.status = (b[9] - '0') * 100 + (b[10] - '0') * 10 + (b[11] - '0');
	else if (n == 0)
		c->status_seen = true;
}

static void on_upstream(struct ward_proxy *p, struct conn *c, uint32_t ev)
{
	if (c->st == S_CONNECT) {
		int e = 0;
		socklen_t l = sizeof(e);

		if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
			e = errno;
		if (e == 0 && (ev & EPOLLERR))
			e = ECONNREFUSED;
		if (e) {
			try_next_address(p, c, e);
			return;
		}
		upstream_ready(p, c);
		ev = EPOLLOUT;
	}
	if (c->st != S_RELAY)
		return;
	if (ev & EPOLLOUT) {
		if (!flow_out(c->up.fd, &c->to_up, &c->up_pipe, &c->rec.bytes_up)) {
			conn_kill(p, c);
			return;
		}
	}
	if ((ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->up_eof) {
		if (c->http && !c->status_seen)
			peek_status(c);
		/* a reset upstream ends like a closed one: what was relayed
		 * stays relayed */
		if (!flow_in(c->up.fd, &c->to_cl, &c->cl_pipe, &c->up_eof))
			c->up_eof = true;
		if (flow_pending(&c->to_cl, &c->cl_pipe) &&
		    !flow_out(c->cl.fd, &c->to_cl, &c->cl_pipe, &c->rec.bytes_down)) {
			conn_kill(p, c);
			return;
		}
	}
	if ((ev & (EPOLLHUP | EPOLLERR)) && c->up_eof)
		close_endpoint(p, &c->up); /* nothing more to read or write there */
	relay_progress(p, c);
}


/* ---- interception ------------------------------------------------------
 *
 * A CONNECT to a host ward_netpolicy_intercepts() names goes the same way
 * as a tunnel — policy, resolution, the destination check, a connection to
 * an address that passed — and then, instead of the byte relay, both
 * sockets go to a thread of their own (struct mitm): "200 Connection
 * established", a TLS handshake with the client as that host (a leaf of
 * the run's CA), one with the real server (verified against the system's
 * store and --upstream-ca), then HTTP/1.1 requests read one after the
 * other, each judged by the rules (ward_netrules_request(): secrets,
 * credentials, request rules — the same verdict as for plain HTTP) and, if
 * allowed, sent on, its response relayed back.
 *
 * The TLS itself is ward-tls's (net-internal.h): the thread hands it both
 * sockets and works on the plaintext it gives back, in the same framing
 * code as plain HTTP's.
 *
 * Why threads and blocking I/O here, when tunnels live in the event loop:
 * a request is read, judged, sent on and its response relayed in plain
 * sequential code, with a deadline on every read (SO_RCVTIMEO); on the
 * loop, the same framing as a state machine would have doubled this code.
 * Threads are capped (MAX_MITM: the next gets 503). ward_proxy_finish()
 * ends the rest by shutting their sockets down, and joins them. */

#define MITM_HEAD_TIMEOUT_NS (30LL * 1000000000)  /* a handshake, a request head */
#define MITM_IO_TIMEOUT_NS (300LL * 1000000000)   /* silence inside a body or response */
#define MITM_BUF (64 * 1024)   /* each buffer, and the largest response head */
/* A response body past MITM_GROW_AFTER bytes is a download: the server's
 * buffer grows to MITM_BUF_BIG and the client's plaintext socket's send
 * buffer to MITM_SNDBUF_BIG (fewer, larger pieces; ward-tls's legs do the
 * same), for MITM_BIG_MAX connections at once (the host's memory, which no
 * cgroup of the sandbox's bounds). */
#define MITM_GROW_AFTER (1 << 20)
#define MITM_BUF_BIG (256 * 1024)
#define MITM_SNDBUF_BIG (512 * 1024)
#define MITM_BIG_MAX 8
/* A body framed by its length with at least this much to come is passed
 * by ward-tls itself (pass_body()). */
#define MITM_PASS_MIN (1 << 20)

static int mitms_big; /* connections grown now, every proxy's (atomic) */

struct mitm {
	struct mitm *next;
	struct ward_proxy *p;
	pthread_t th;
	int cl_fd, up_fd;              /* the plaintext, from ward-tls */
	int pass_fd;                   /* the job's pass socket (see pass_body()) */
	uint64_t up_read, cl_written;  /* bytes read from up_fd, written to cl_fd */
	int done;                      /* the thread has finished (atomic) */
	bool stopping;                 /* ward_proxy_finish() shut the sockets */
	bool linger;                   /* the proxy answered an error: see mitm_main() */
	long long cl_left, up_left;    /* the timeout last set on each socket (ns) */
	struct {
		char host[256];        /* normalised, as the CONNECT line named it */
		bool literal;          /* an IP literal */
	} peer;
	uint16_t port;
	struct ward_net_record rec;    /* the CONNECT's record */
	char allow_rule[WARD_NET_RULE_MAX];
	long long started_ns;
	char *in, *ub;                 /* the client's and the server's unread bytes */
	size_t in_len, ub_len;
	size_t ub_cap;                 /* MITM_BUF, or MITM_BUF_BIG once grown */
	bool big;                      /* grown: counted in mitms_big */
};

/* A download's bigger buffer (ub empty, the budget allowing). */
static void mitm_grow(struct mitm *m, uint64_t carried)
{
	int sz = MITM_SNDBUF_BIG;
	char *b;

	if (m->big || carried < MITM_GROW_AFTER || m->ub_len)
		return;
	if (__atomic_add_fetch(&mitms_big, 1, __ATOMIC_RELAXED) > MITM_BIG_MAX) {
		__atomic_sub_fetch(&mitms_big, 1, __ATOMIC_RELAXED);
		return;
	}
	b = realloc(m->ub, MITM_BUF_BIG);
	if (!b) {
		__atomic_sub_fetch(&mitms_big, 1, __ATOMIC_RELAXED);
		return;
	}
	m->ub = b;
	m->ub_cap = MITM_BUF_BIG;
	m->big = true;
	setsockopt(m->cl_fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
}

/* dst = a then b, cut at size (a record's rule: the deciding rule, then
 * what interception added). */
static void join(char *dst, size_t size, const char *a, const char *b)
{
	size_t la = strnlen(a, size - 1), lb = strnlen(b, size - 1 - la);

	memmove(dst, a, la);
	memcpy(dst + la, b, lb);
	dst[la + lb] = '\0';
}

static void set_timeout(int fd, long long deadline)
{
	long long left = deadline - ward_now_ns();
	struct timeval tv;

	if (left < 1000000)
		left = 1000000;
	tv.tv_sec = left / 1000000000;
	tv.tv_usec = (left % 1000000000) / 1000;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* set_timeout() unless the timeout set last on that socket is within a
 * second of it: a relay's reads and writes each renew a 300 s deadline, and
 * two setsockopt calls per TLS record were a measurable part of a
 * download's cost. */
static void renew_timeout(struct mitm *m, int fd, long long deadline)
{
	long long left = deadline - ward_now_ns(), *last = fd == m->cl_fd ? &m->cl_left : &m->up_left;

	if (*last && left >= *last - 1000000000LL && left <= *last + 1000000000LL)
		return;
	set_timeout(fd, deadline);
	*last = left;
}

/* > 0 bytes, 0 at the end of the stream (or a reset), -1 on an error, -2
 * at the deadline. */
static ssize_t leg_read(struct mitm *m, int fd, char *b, size_t n, long long deadline)
{
	ssize_t k;

	renew_timeout(m, fd, deadline);
	do
		k = read(fd, b, n);
	while (k < 0 && errno == EINTR);
	if (k > 0 && fd == m->up_fd)
		m->up_read += (uint64_t)k;
	if (k >= 0)
		return k;
	if (errno == EAGAIN)
		return -2;
	return errno == ECONNRESET || errno == EPIPE ? 0 : -1;
}

static bool leg_write(struct mitm *m, int fd, const char *b, size_t n, long long deadline)
{
	renew_timeout(m, fd, deadline);
	if (ward_write_all(fd, b, n) < 0)
		return false;
	if (fd == m->cl_fd)
		m->cl_written += n;
	return true;
}

/* ward-tls's answer on the pass socket, by deadline (0: none). 0, or -1:
 * the helper went away (the connection with it), or said what it may not. */
static int pass_answer(struct mitm *m, struct ward_tls_pass *r, long long deadline)
{
	for (;;) {
		struct pollfd pf = { .fd = m->pass_fd, .events = POLLIN };
		long long ms = deadline ? (deadline - ward_now_ns()) / 1000000 : -1;
		ssize_t n;

		if (deadline && ms < 0)
			return -1;
		if (poll(&pf, 1, ms > INT_MAX ? INT_MAX : (int)ms) < 0 && errno != EINTR)
			return -1;
		n = recv(m->pass_fd, r, sizeof(*r), MSG_DONTWAIT);
		if (n == (ssize_t)sizeof(*r))
			return 0;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return -1;
	}
}

/* The rest of a long body framed by its length, passed by ward-tls from
 * the server's leg to the client's without coming through here (see
 * net-internal.h, "Passing a body"): only counted. 1 when it went whole, 0
 * when ward-tls would not (relayed here then, as before), -1 when the
 * connection ends. *left and *count follow what went. */
static int pass_body(struct mitm *m, uint64_t *left, uint64_t *count)
{
	struct ward_tls_pass q = { .kind = WARD_TLS_PASS, .a = m->up_read, .b = m->cl_written,
				   .len = *left },
			     r;

	if (send(m->pass_fd, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q) ||
	    pass_answer(m, &r, ward_now_ns() + MITM_HEAD_TIMEOUT_NS) < 0)
		return -1;
	if (r.kind == WARD_TLS_PASS_REFUSE)
		return 0;
	if (r.kind != WARD_TLS_PASS_DRAIN || r.a > *left)
		return -1;
	/* what the server's plaintext holds already is ours to relay */
	for (uint64_t k = r.a; k;) {
		ssize_t n = leg_read(m, m->up_fd, m->ub, k < m->ub_cap ? (size_t)k : m->ub_cap,
				     ward_now_ns() + MITM_IO_TIMEOUT_NS);

		if (n <= 0 ||
		    !leg_write(m, m->cl_fd, m->ub, (size_t)n, ward_now_ns() + MITM_IO_TIMEOUT_NS))
			return -1;
		k -= (uint64_t)n;
		*left -= (uint64_t)n;
		*count += (uint64_t)n;
	}
	/* then the helper's part: no deadline here (its legs have theirs,
	 * and its end of the pair closes with the connection) */
	if (pass_answer(m, &r, 0) < 0 || r.kind != WARD_TLS_PASS_DONE || r.a > *left)
		return -1;
	*left -= r.a;
	*count += r.a;
	return r.ok && *left == 0 ? 1 : -1;
}

/* The proxy's own answer inside the TLS connection; the connection ends
 * after it. */
static void mitm_answer(struct mitm *m, struct ward_net_record *r, int status,
			const char *decision, const char *reason)
{
	char out[WARD_NET_RULE_MAX + 256];
	int n = snprintf(out, sizeof(out),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
			 "Content-Length: %zu\r\n\r\nward proxy: %s\n",
			 status, status_text(status), strlen(reason) + 13, reason);

	snprintf(r->decision, sizeof(r->decision), "%s", decision);
	snprintf(r->rule, sizeof(r->rule), "%s", reason);
	r->status = status;
	m->linger = true;
	if (n > 0)
		leg_write(m, m->cl_fd, out, (size_t)n < sizeof(out) ? (size_t)n : sizeof(out),
			  ward_now_ns() + MITM_HEAD_TIMEOUT_NS);
}

static void consume(char *b, size_t *len, size_t n)
{
	memmove(b, b + n, *len - n);
	*len -= n;
}

/* The request body, client -> server, as its head framed it. 0, or the
 * status to answer (400 for a malformed chunked body), or -1 when a side
 * went away. */
static int relay_request_body(struct mitm *m, const struct ward_http_body *body,
			      uint64_t *count)
{
	struct ward_chunked ch = { 0 };
	uint64_t left = body->length;
	bool done = !body->chunked && left == 0;

	while (!done) {
		size_t take;
		ssize_t n;

		if (m->in_len) {
			if (body->chunked) {
				ssize_t k = ward_chunked_feed(&ch, m->in, m->in_len, &done);

				if (k < 0)
					return 400;
				take = (size_t)k;
			} else {
				take = m->in_len < left ? m->in_len : (size_t)left;
				left -= take;
				done = left == 0;
			}
			if (!leg_write(m, m->up_fd, m->in, take,
				       ward_now_ns() + MITM_IO_TIMEOUT_NS))
				return -1;
			*count += take;
			consume(m->in, &m->in_len, take);
			continue;
		}
		n = leg_read(m, m->cl_fd, m->in, MITM_BUF, ward_now_ns() + MITM_IO_TIMEOUT_NS);
		if (n <= 0)
			return -1;
		m->in_len = (size_t)n;
	}
	return 0;
}

/* Read the server until a response head is whole; 1, or -1 (reason). */
static int read_response_head(struct mitm *m, bool head_request, struct ward_http_response *rs,
			      char *reason, size_t size)
{
	for (;;) {
		int rc = ward_http_parse_response(m->ub, m->ub_len, head_request, rs, reason, size);
		ssize_t n;

		if (rc != 0)
			return rc;
		if (m->ub_len >= MITM_BUF) {
			snprintf(reason, size, "response head larger than %d bytes", MITM_BUF);
			return -1;
		}
		n = leg_read(m, m->up_fd, m->ub + m->ub_len, MITM_BUF - m->ub_len,
			     ward_now_ns() + MITM_IO_TIMEOUT_NS);
		if (n <= 0) {
			snprintf(reason, size, "%s", n == 0 ? "the server closed without a response" :
							      "no response from the server in time");
			return -1;
		}
		m->ub_len += (size_t)n;
	}
}

/* The response's body, server -> client. false when it could not be
 * relayed whole (then the connection ends). */
static bool relay_response_body(struct mitm *m, const struct ward_http_response *rs,
				uint64_t *count)
{
	struct ward_chunked ch = { 0 };
	uint64_t left = rs->length;
	bool done = !rs->chunked && !rs->until_close && left == 0, asked = false;

	while (!done) {
		size_t take;
		ssize_t n;

		if (m->ub_len) {
			if (rs->chunked) {
				ssize_t k = ward_chunked_feed(&ch, m->ub, m->ub_len, &done);

				if (k < 0)
					return false;
				take = (size_t)k;
			} else if (rs->until_close) {
				take = m->ub_len;
			} else {
				take = m->ub_len < left ? m->ub_len : (size_t)left;
				left -= take;
				done = left == 0;
			}
			if (!leg_write(m, m->cl_fd, m->ub, take,
				       ward_now_ns() + MITM_IO_TIMEOUT_NS))
				return false;
			*count += take;
			consume(m->ub, &m->ub_len, take);
			continue;
		}
		mitm_grow(m, *count);
		if (!rs->chunked && !rs->until_close && left >= MITM_PASS_MIN && !asked) {
			int r = pass_body(m, &left, count);

			if (r != 0)
				return r > 0;
			asked = true; /* refused: this body comes through here */
		}
		n = leg_read(m, m->up_fd, m->ub, m->ub_cap, ward_now_ns() + MITM_IO_TIMEOUT_NS);
		if (n == 0 && rs->until_close)
			return true;
		if (n <= 0)
			return false;
		m->ub_len = (size_t)n;
	}
	return true;
}

/* The upstream connection stays open for the client's next request: the
 * forwarded head's "Connection: close" (ward_http_forward_head() ends every
 * head with it, for the loop's one-request connections) is dropped. */
static void keep_alive_head(char *out, size_t *len)
{
	static const char close_line[] = "\r\nConnection: close\r\n\r\n";
	char *end = memmem(out, *len, "\r\n\r\n", 4);
	char *c = end ? memmem(out, (size_t)(end - out) + 4, close_line, sizeof(close_line) - 1)
		      : NULL;

	if (!c || c + sizeof(close_line) - 1 != end + 4)
		return;
	/* "\r\nConnection: close\r\n\r\n" -> "\r\n\r\n" */
	memmove(c + 4, end + 4, *len - (size_t)(end + 4 - out));
	memcpy(c, "\r\n\r\n", 4);
	*len -= sizeof(close_line) - 1 - 4;
}

/* The largest request body collected whole while secrets are in force, as
 * the client framed it (chunk sizes included): the rules refuse one whose
 * content is over WARD_NETRULES_BODY_MAX; this bounds what a thread holds
 * (MAX_MITM of them at most). */
#define MITM_BODY_RAW_MAX (WARD_NETRULES_BODY_MAX + WARD_NETRULES_BODY_MAX / 2)

/* The request body, as framed, into a buffer of its own (the rules want it
 * whole before anything goes upstream). 0, or the status to answer (400 a
 * malformed chunked body, 413 too large), or -1 when the client went
 * away. */
static int collect_request_body(struct mitm *m, const struct ward_http_body *body, char **out,
				size_t *out_len)
{
	struct ward_chunked ch = { 0 };
	uint64_t left = body->length;
	bool done = !body->chunked && left == 0;
	char *buf = NULL;
	size_t len = 0;

	*out = NULL;
	*out_len = 0;
	while (!done) {
		size_t take;
		ssize_t n;

		if (m->in_len) {
			char *g;

			if (body->chunked) {
				ssize_t k = ward_chunked_feed(&ch, m->in, m->in_len, &done);

				if (k < 0) {
					free(buf);
					return 400;
				}
				take = (size_t)k;
			} else {
				take = m->in_len < left ? m->in_len : (size_t)left;
				left -= take;
				done = left == 0;
			}
			if (len + take > MITM_BODY_RAW_MAX) {
				free(buf);
				return 413;
			}
			g = realloc(buf, len + take + 1);
			if (!g) {
				free(buf);
				return 500;
			}
			buf = g;
			memcpy(buf + len, m->in, take);
			len += take;
			consume(m->in, &m->in_len, take);
			continue;
		}
		n = leg_read(m, m->cl_fd, m->in, MITM_BUF, ward_now_ns() + MITM_IO_TIMEOUT_NS);
		if (n <= 0) {
			free(buf);
			return -1;
		}
		m->in_len = (size_t)n;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

/* The rules' verdict on an intercepted request whose head is m->in
 * (parsed as req): with secrets in force and a body, the body is read
 * whole first (the client told to go on when it asked, *said_continue)
 * and judged with the head. On return the head, and a collected body, are
 * gone from m->in; v->out is what goes upstream, and *body_sent says
 * whether it holds the body too. -1 when the client went away inside its
 * body. */
static int mitm_judge(struct mitm *m, struct ward_http_request *req, bool expect,
		      struct ward_netrules_verdict *v, bool *said_continue, bool *body_sent)
{
	static const char continue_100[] = "HTTP/1.1 100 Continue\r\n\r\n";
	const struct ward_netrules *rules = m->p->rules;
	char *head, *body = NULL;
	size_t head_len = req->head_len, body_len;
	int rc;

	*said_continue = *body_sent = false;
	ward_netrules_request(rules, req, m->in, NULL, 0, false, v);
	if (!v->allow || !v->need_body) {
		consume(m->in, &m->in_len, head_len);
		return 0;
	}
	/* the head, kept (req points into it) while m->in takes the body */
	head = malloc(head_len + 1);
	if (!head) {
		ward_netrules_verdict_release(v);
		*v = (struct ward_netrules_verdict){ .status = 500 };
		snprintf(v->reason, sizeof(v->reason), "out of memory");
		return 0;
	}
	memcpy(head, m->in, head_len);
	head[head_len] = '\0';
	req->target = head + (req->target - m->in);
	consume(m->in, &m->in_len, head_len);
	if (expect) {
		if (!leg_write(m, m->cl_fd, continue_100, sizeof(continue_100) - 1,
			       ward_now_ns() + MITM_IO_TIMEOUT_NS)) {
			free(head);
			ward_netrules_verdict_release(v);
			return -1;
		}
		*said_continue = true;
	}
	rc = collect_request_body(m, &v->framing, &body, &body_len);
	ward_netrules_verdict_release(v);
	if (rc < 0) {
		free(head);
		return -1;
	}
	if (rc > 0) {
		*v = (struct ward_netrules_verdict){ .status = rc };
		snprintf(v->reason, sizeof(v->reason), "%s",
			 rc == 400 ? "malformed chunked body" :
			 rc == 413 ? "request body too large while secrets are in force" :
				     "out of memory");
		free(head);
		return 0;
	}
	ward_netrules_request(rules, req, head, body, body_len, true, v);
	if (body)
		explicit_bzero(body, body_len);
	free(body);
	free(head);
	*body_sent = true;
	return 0;
}

/* Between requests: the client's next one, or the server's end. A server
 * may close a connection it holds idle (its keep-alive timeout) without
 * having said so; ending the client's connection then, as that server's
 * close would have without the proxy, lets the client open a fresh one for
 * its next request, where keeping it open would have that request answered
 * 502 by a connection with no server behind it (and the proxy waiting the
 * head timeout for it). false: end the connection now. */
static bool await_request(struct mitm *m, long long deadline)
{
	struct pollfd pf[2] = { { .fd = m->cl_fd, .events = POLLIN },
				{ .fd = m->up_fd, .events = POLLIN | POLLRDHUP } };

	if (m->in_len || m->ub_len || m->up_fd < 0)
		return true;
	for (;;) {
		long long ms = (deadline - ward_now_ns()) / 1000000;
		int n;

		if (ms <= 0)
			return true; /* the read says it is too late */
		n = poll(pf, 2, ms > INT_MAX ? INT_MAX : (int)ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || pf[0].revents)
			return true;
		if (pf[1].revents) /* its end, or bytes no request asked for */
			return false;
	}
}

/* One request and its response. false when the connection ends after it. */
static bool mitm_request(struct mitm *m, bool upstream_ok, const char *up_reason)
{
	struct ward_proxy *p = m->p;
	struct ward_net_record r = { 0 };
	struct ward_http_request req;
	struct ward_http_response rs;
	struct ward_http_body body;
	char reason[WARD_NET_RULE_MAX];
	long long deadline = ward_now_ns() + MITM_HEAD_TIMEOUT_NS, t0 = ward_now_ns();
	static const char continue_100[] = "HTTP/1.1 100 Continue\r\n\r\n";
	struct ward_netrules_verdict v;
	bool keep = false, head_req, expect, said_continue, body_sent;
	size_t len;
	int rc, status;

	r.time_ms = unix_ms();
	snprintf(r.host, sizeof(r.host), "%s", m->peer.host);
	r.port = m->port;
	snprintf(r.address, sizeof(r.address), "%s", m->rec.address);
	if (upstream_ok && !await_request(m, deadline))
		return false;
	while ((rc = ward_http_parse_origin(m->in, m->in_len, m->peer.host, m->peer.literal, m->port,
					    &req, &status, reason, sizeof(reason))) == 0) {
		ssize_t n;

		if (m->in_len == HEAD_READ_MAX) {
			rc = -1;
			status = 431;
			snprintf(reason, sizeof(reason), "request head larger than %d bytes",
				 HEAD_READ_MAX);
			break;
		}
		n = leg_read(m, m->cl_fd, m->in + m->in_len, HEAD_READ_MAX - m->in_len,
			     deadline);
		if (n <= 0) {
			if (m->in_len == 0)
				return false; /* the client is done (or idle too long) */
			snprintf(r.rule, sizeof(r.rule), "%s",
				 n == -2 ? "no complete request in time" :
					   "client closed inside a request head");
			goto out;
		}
		m->in_len += (size_t)n;
	}
	if (rc < 0) {
		mitm_answer(m, &r, status, "deny", reason);
		goto out;
	}
	snprintf(r.method, sizeof(r.method), "%s", req.method);
	if (!upstream_ok) {
		mitm_answer(m, &r, 502, "error", up_reason);
		goto out;
	}
	snprintf(r.decision, sizeof(r.decision), "allow");
	join(r.rule, sizeof(r.rule), m->allow_rule, "; intercepted");
	keep = !ward_http_header_lists(m->in, req.head_len, "connection", "close");
	{
		/* HTTP/1.0 closes unless it asked otherwise */
		const char *eol = memmem(m->in, req.head_len, "\r\n", 2);

		if (eol && eol[-1] == '0')
			keep = false;
	}
	head_req = strcmp(req.method, "HEAD") == 0;
	/* "Expect: 100-continue": the client waits (curl for a second) before
	 * its body, and this relay reads the body before the response. So the
	 * proxy says 100 itself, and passes on no 100 of the server's. */
	expect = ward_http_header_lists(m->in, req.head_len, "expect", "100-continue");
	if (mitm_judge(m, &req, expect, &v, &said_continue, &body_sent) < 0) {
		snprintf(r.rule + strlen(r.rule), sizeof(r.rule) - strlen(r.rule),
			 "; the client went away inside the request body");
		keep = false;
		goto out;
	}
	snprintf(r.path, sizeof(r.path), "%s", v.path);
	snprintf(r.request_rule, sizeof(r.request_rule), "%s", v.rule);
	snprintf(r.secrets, sizeof(r.secrets), "%s", v.secrets);
	if (!v.allow) {
		mitm_answer(m, &r, v.status, v.status == 500 ? "error" : "deny", v.reason);
		ward_netrules_verdict_release(&v);
		keep = false; /* a body the client may still send is not read */
		goto out;
	}
	if (v.credential)
		join(r.rule, sizeof(r.rule), r.rule, "; credential added");
	body = body_sent ? (struct ward_http_body){ 0 } : v.framing;
	expect = expect && !said_continue && (body.chunked || body.length);
	len = v.out_len;
	keep_alive_head(v.out, &len);
	if (!leg_write(m, m->up_fd, v.out, len, ward_now_ns() + MITM_IO_TIMEOUT_NS)) {
		ward_netrules_verdict_release(&v);
		mitm_answer(m, &r, 502, "error", "the server went away");
		keep = false;
		goto out;
	}
	ward_netrules_verdict_release(&v);
	r.bytes_up += len;
	if (expect && !leg_write(m, m->cl_fd, continue_100, sizeof(continue_100) - 1,
				 ward_now_ns() + MITM_IO_TIMEOUT_NS)) {
		keep = false;
		goto out;
	}
	expect = expect || said_continue; /* a 100 of the server's is not passed on */
	rc = relay_request_body(m, &body, &r.bytes_up);
	if (rc != 0) {
		if (rc > 0)
			mitm_answer(m, &r, rc, "deny", "malformed chunked body");
		else
			snprintf(r.rule + strlen(r.rule), sizeof(r.rule) - strlen(r.rule),
				 "; a side went away inside the request body");
		keep = false;
		goto out;
	}
	for (;;) {
		if (read_response_head(m, head_req, &rs, reason, sizeof(reason)) < 0) {
			mitm_answer(m, &r, 502, "error", reason);
			keep = false;
			goto out;
		}
		if (expect && rs.status == 100) {
			consume(m->ub, &m->ub_len, rs.head_len); /* said already */
			continue;
		}
		if (!leg_write(m, m->cl_fd, m->ub, rs.head_len,
			       ward_now_ns() + MITM_IO_TIMEOUT_NS)) {
			keep = false;
			goto out;
		}
		r.bytes_down += rs.head_len;
		r.status = rs.status; /* the upstream's, as for plain HTTP */
		consume(m->ub, &m->ub_len, rs.head_len);
		/* 100 Continue and the like: the real answer follows (101 cannot:
		 * Upgrade is not forwarded) */
		if (rs.status >= 200 || rs.status == 101)
			break;
	}
	/* What the server sent past its response is not passed on. And after
	 * an "Expect: 100-continue" the connection ends too: a server that
	 * answered before reading the body could take the body for the next
	 * request on this connection, one of the client's making, which would
	 * then get the proxy's next forwarded head (credentials) as its body. */
	if (!relay_response_body(m, &rs, &r.bytes_down) || rs.close || rs.status == 101 ||
	    m->ub_len || expect)
		keep = false;
out:
	if (!r.method[0] && m->in_len) {
		size_t k = 0;

		/* m->in is not NUL-terminated: what lies past in_len is stale
		 * or never written, and may run past the buffer */
		while (k < m->in_len && !strchr(" \r\n", m->in[k]))
			k++;

		if (k < sizeof(r.method) && k < m->in_len)
			snprintf(r.method, sizeof(r.method), "%.*s", (int)k, m->in);
	}
	r.duration_ms = (ward_now_ns() - t0) / 1000000;
	if (!r.decision[0])
		snprintf(r.decision, sizeof(r.decision), "error");
	m->rec.bytes_up += r.bytes_up;
	m->rec.bytes_down += r.bytes_down;
	store_record(p, &r);
	return keep;
}

static void *mitm_main(void *arg)
{
	struct mitm *m = arg;
	struct ward_tls_status st;
	bool upstream_ok;

	/* both handshakes are the helper's (at once, within its own total
	 * deadline); its word on them comes first */
	if (ward_tlshelper_status(m->up_fd, ward_now_ns() + MITM_HEAD_TIMEOUT_NS + 5000000000LL,
				  &st) < 0) {
		snprintf(m->rec.decision, sizeof(m->rec.decision), "error");
		snprintf(m->rec.rule, sizeof(m->rec.rule), "the TLS helper did not answer");
		goto out;
	}
	if (!st.client_ok) {
		snprintf(m->rec.decision, sizeof(m->rec.decision), "%s",
			 st.sni_refused ? "deny" : "error");
		join(m->rec.rule, sizeof(m->rec.rule), m->allow_rule, "; intercepted: ");
		join(m->rec.rule, sizeof(m->rec.rule), m->rec.rule, st.client_reason);
		goto out;
	}
	upstream_ok = st.upstream_ok;
	if (upstream_ok) {
		join(m->rec.rule, sizeof(m->rec.rule), m->allow_rule, "; intercepted");
	} else {
		snprintf(m->rec.decision, sizeof(m->rec.decision), "error");
		snprintf(m->rec.rule, sizeof(m->rec.rule), "%s", st.upstream_reason);
	}
	while (mitm_request(m, upstream_ok, st.upstream_reason) &&
	       !__atomic_load_n(&m->stopping, __ATOMIC_ACQUIRE))
		;
	if (m->linger && !__atomic_load_n(&m->stopping, __ATOMIC_ACQUIRE)) {
		/* A refused request may still be arriving (a head too large, a
		 * body): closing with it unread would reset the connection,
		 * and the client could lose the answer. Read and drop a
		 * little, briefly, as HTTP servers' lingering close does. */
		char sink[16384];
		size_t total = 0;
		ssize_t n;

		shutdown(m->cl_fd, SHUT_WR);
		set_timeout(m->cl_fd, ward_now_ns() + 500000000LL);
		while (total < (1u << 20) && (n = read(m->cl_fd, sink, sizeof(sink))) > 0)
			total += (size_t)n;
	}
out:
	/* the fds stay open (ward_proxy_finish() may shut them down at any
	 * time); the ends see the connection close now (the helper sends
	 * each its close_notify) */
	shutdown(m->cl_fd, SHUT_RDWR);
	shutdown(m->up_fd, SHUT_RDWR);
	/* a body still passing (a failure on the way) stops too */
	shutdown(m->pass_fd, SHUT_RDWR);
	m->rec.duration_ms = (ward_now_ns() - m->started_ns) / 1000000;
	store_record(m->p, &m->rec);
	__atomic_store_n(&m->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void mitm_free(struct mitm *m)
{
	if (m->cl_fd >= 0)
		close(m->cl_fd);
	if (m->up_fd >= 0)
		close(m->up_fd);
	if (m->pass_fd >= 0)
		close(m->pass_fd);
	free(m->in);
	free(m->ub);
	if (m->big)
		__atomic_sub_fetch(&mitms_big, 1, __ATOMIC_RELAXED);
	free(m);
}

/* Join what has finished (all: shut the rest down first). */
static void mitm_reap(struct ward_proxy *p, bool all)
{
	struct mitm **at = &p->mitms;

	while (*at) {
		struct mitm *m = *at;

		if (all && !__atomic_load_n(&m->done, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&m->stopping, true, __ATOMIC_RELEASE);
			shutdown(m->cl_fd, SHUT_RDWR);
			shutdown(m->up_fd, SHUT_RDWR);
			shutdown(m->pass_fd, SHUT_RDWR); /* a thread waiting on a pass */
		}
		if (!all && !__atomic_load_n(&m->done, __ATOMIC_ACQUIRE)) {
			at = &m->next;
			continue;
		}
		pthread_join(m->th, NULL);
		*at = m->next;
		p->n_mitms--;
		mitm_free(m);
	}
}

static void mitm_start(struct ward_proxy *p, struct conn *c)
{
	struct mitm *m;
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	if (c->to_up.end > c->to_up.start) {
		reply(p, c, 400, "deny", "data sent before the tunnel was established");
		return;
	}
	if (!p->tls) {
		reply(p, c, 502, "error", "TLS interception is not set up");
		return;
	}
	mitm_reap(p, false);
	if (p->n_mitms >= MAX_MITM) {
		reply(p, c, 503, "error", "too many intercepted connections at once");
		return;
	}
	m = calloc(1, sizeof(*m));
	if (m) {
		m->in = malloc(MITM_BUF);
		m->ub = malloc(MITM_BUF);
	}
	if (!m || !m->in || !m->ub) {
		if (m) {
			free(m->in);
			free(m->ub);
		}
		free(m);
		reply(p, c, 500, "error", "out of memory");
		return;
	}
	m->ub_cap = MITM_BUF;
	m->p = p;
	snprintf(m->peer.host, sizeof(m->peer.host), "%s", c->req.host);
	m->peer.literal = c->req.literal;
	m->port = c->req.port;
	m->rec = c->rec;
	snprintf(m->allow_rule, sizeof(m->allow_rule), "%s", c->allow_rule);
	m->started_ns = c->started_ns;
	m->rec.time_ms = c->rec.time_ms;
	/* the sockets go to the helper, the plaintext to the thread
	 * (blocking). The hand-over first: a helper that is gone is a 502
	 * the client can read; the helper writes nothing before the client's
	 * ClientHello, which comes only after the 200 below. */
	{
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		/* TLS records are written whole: no Nagle wait for an ACK that
		 * the other side delays */
		int one = 1;

		setsockopt(c->cl.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		setsockopt(c->up.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		rc = ward_tlshelper_hand(p->tls, m->peer.host, m->peer.literal, m->port, c->cl.fd,
					 c->up.fd, &m->cl_fd, &m->up_fd, &m->pass_fd);
		if (rc < 0) {
			char why[128];

			free(m->in);
			free(m->ub);
			free(m);
			snprintf(why, sizeof(why), "the TLS helper is gone: %s", strerror(-rc));
			reply(p, c, 502, "error", why);
			return;
		}
		epoll_ctl(p->ep, EPOLL_CTL_DEL, c->cl.fd, NULL);
		epoll_ctl(p->ep, EPOLL_CTL_DEL, c->up.fd, NULL);
		/* a fresh socket takes these few bytes at once, or its client
		 * is not reading; the helper's handshake then fails, recorded */
		if (send(c->cl.fd, ok, sizeof(ok) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) ==
		    (ssize_t)sizeof(ok) - 1)
			m->rec.status = 200;
	}
	/* the helper has its own copies of the sockets */
	close(c->cl.fd);
	close(c->up.fd);
	c->cl.fd = c->up.fd = -1;
	c->handed = true;
	/* the thread takes no signals: a write to a closed socket gives EPIPE */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 512 * 1024);
	rc = pthread_create(&m->th, &attr, mitm_main, m);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(m->rec.rule, sizeof(m->rec.rule), "cannot start a thread: %s",
			 strerror(rc));
		snprintf(m->rec.decision, sizeof(m->rec.decision), "error");
		store_record(p, &m->rec);
		mitm_free(m);
	} else {
		m->next = p->mitms;
		p->mitms = m;
		p->n_mitms++;
	}
	conn_kill(p, c);
}

int ward_proxy_start_tls(struct ward_proxy *p, int bundle_fd, struct ward_error **err)
{
	static const char *const system_bundle = "/etc/ssl/certs/ca-certificates.crt";
	const char *pem;
	char buf[64 * 1024];
	ssize_t n;
	int fd;

	if (p->tls)
		return 0;
	if (ward_tlshelper_start(p->policy.upstream_ca, &p->tls, err) < 0)
		return -1;
	if (bundle_fd < 0)
		return 0;
	/* the system's trust, then the run's CA: public material only */
	fd = open(system_bundle, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0) {
		if (ward_write_all(bundle_fd, buf, (size_t)n) < 0) {
			close(fd);
			return ward_error_make(err, errno, "write the sandbox's CA bundle");
		}
	}
	if (fd >= 0)
		close(fd);
	pem = ward_tlshelper_ca_pem(p->tls);
	if (ward_write_all(bundle_fd, "\n", 1) < 0 || ward_write_all(bundle_fd, pem, strlen(pem)) < 0)
		return ward_error_make(err, errno, "write the sandbox's CA bundle");
	return 0;
}

const char *ward_proxy_ca_pem(const struct ward_proxy *p)
{
	return p->tls ? ward_tlshelper_ca_pem(p->tls) : NULL;
}

static void accept_all(struct ward_proxy *p, struct endpoint *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* a level-triggered listener would fire again at
				 * once: rest until a connection ends */
				for (size_t i = 0; i < p->n_listeners; i++)
					set_events(p, p->listeners[i], 0);
				p->paused = true;
			}
			return;
		}
		if (p->n_conns >= MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->id = ++p->next_id;
		c->cl = (struct endpoint){ K_CLIENT, c, fd, 0 };
		c->up = (struct endpoint){ K_UPSTREAM, c, -1, 0 };
		c->up_pipe.fd[0] = c->up_pipe.fd[1] = c->cl_pipe.fd[0] = c->cl_pipe.fd[1] = -1;
		c->started_ns = ward_now_ns();
		c->deadline = c->started_ns + HEAD_TIMEOUT_NS;
		c->rec.time_ms = unix_ms();
		if (watch(p, &c->cl, EPOLLIN) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = p->conns;
		if (p->conns)
			p->conns->prev = c;
		p->conns = c;
		p->n_conns++;
	}
}

static struct conn *find_conn(struct ward_proxy *p, uint64_t id)
{
	for (struct conn *c = p->conns; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

static void resolved(struct ward_proxy *p)
{
	struct job *done, *j;
	uint64_t v;

	if (read(p->res->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&p->res->mu);
	done = p->res->done;
	p->res->done = NULL;
	pthread_mutex_unlock(&p->res->mu);
	while ((j = done)) {
		struct conn *c = find_conn(p, j->conn_id);

		done = j->next;
		if (c && c->st == S_RESOLVE) {
			if (j->gai != 0) {
				char reason[WARD_NET_RULE_MAX];

				snprintf(reason, sizeof(reason), "cannot resolve '%s': %s", j->host,
					 gai_strerror(j->gai));
				reply(p, c, 502, "error", reason);
			} else {
				addresses_known(p, c, j->res);
			}
			if (!c->dead)
				update_interest(p, c);
		}
		if (j->res)
			freeaddrinfo(j->res);
		free(j);
	}
}

static void handover(struct ward_proxy *p)
{
	char data[1];
	int fd = -1;
	size_t got = 0;

	/* one byte and the listener, or the end: the hand-over is done */
	if (ward_recv_fds(p->handover->fd, data, sizeof(data), &fd, 1, &got, MSG_DONTWAIT) < 0 &&
	    errno == EAGAIN)
		return;
	close_endpoint(p, p->handover);
	free(p->handover);
	p->handover = NULL;
	if (fd >= 0) {
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		ward_proxy_add_listener(p, fd, NULL);
	}
}

void ward_proxy_dispatch(struct ward_proxy *p)
{
	struct epoll_event evs[64];
	long long now;
	int n, i;

	n = epoll_wait(p->ep, evs, ARRAY_SIZE(evs), 0);
	for (i = 0; i < n; i++) {
		struct endpoint *e = evs[i].data.ptr;
		struct conn *c = e->c;

		switch (e->kind) {
		case K_LISTENER:
			accept_all(p, e);
			break;
		case K_HANDOVER:
			handover(p);
			break;
		case K_RESOLVER:
			resolved(p);
			break;
		case K_CLIENT:
		case K_UPSTREAM:
			if (c->dead)
				break;
			if (e->kind == K_CLIENT)
				on_client(p, c, evs[i].events);
			else
				on_upstream(p, c, evs[i].events);
			if (!c->dead)
				update_interest(p, c);
			break;
		}
	}
	now = ward_now_ns();
	for (struct conn *c = p->conns, *next; c; c = next) {
		next = c->next;
		if (!c->deadline || c->deadline > now)
			continue;
		if (c->st == S_HEAD || c->st == S_BODY || c->st == S_REPLY) {
			snprintf(c->rec.rule, sizeof(c->rec.rule), "%s",
				 c->st != S_REPLY ? "no complete request in time" : c->rec.rule);
			conn_kill(p, c);
		} else if (c->st == S_RESOLVE) {
			reply(p, c, 504, "error", "name resolution timed out");
			update_interest(p, c);
		} else if (c->st == S_CONNECT) {
			try_next_address(p, c, ETIMEDOUT);
			if (!c->dead)
				update_interest(p, c);
		}
	}
	while (p->dead) {
		struct conn *c = p->dead;

		p->dead = c->next;
		conn_free(c);
	}
	if (p->mitms)
		mitm_reap(p, false);
}

long long ward_proxy_deadline(const struct ward_proxy *p)
{
	long long d = 0;

	for (const struct conn *c = p->conns; c; c = c->next)
		if (c->deadline && (!d || c->deadline < d))
			d = c->deadline;
	return d;
}

int ward_proxy_fd(const struct ward_proxy *p)
{
	return p->ep;
}

int ward_proxy_add_listener(struct ward_proxy *p, int fd, struct ward_error **err)
{
	struct endpoint *e;

	if (p->n_listeners == ARRAY_SIZE(p->listeners) || !(e = calloc(1, sizeof(*e)))) {
		close(fd);
		return ward_error_make(err, ENOMEM, "proxy listener");
	}
	*e = (struct endpoint){ K_LISTENER, NULL, fd, 0 };
	if (watch(p, e, EPOLLIN) < 0) {
		int saved = errno;

		close(fd);
		free(e);
		return ward_error_make(err, saved, "watch the proxy's listener");
	}
	p->listeners[p->n_listeners++] = e;
	return 0;
}

int ward_proxy_add_handover(struct ward_proxy *p, int unix_fd, struct ward_error **err)
{
	struct endpoint *e = calloc(1, sizeof(*e));

	if (!e) {
		close(unix_fd);
		return ward_error_make(err, ENOMEM, "proxy");
	}
	*e = (struct endpoint){ K_HANDOVER, NULL, unix_fd, 0 };
	if (watch(p, e, EPOLLIN) < 0) {
		int saved = errno;

		close(unix_fd);
		free(e);
		return ward_error_make(err, saved, "watch the hand-over socket");
	}
	p->handover = e;
	return 0;
}

/* The host's own addresses: a proxy on the host must not be a way into
 * services listening on them. */
static void own_addresses(struct ward_proxy *p)
{
	struct ifaddrs *ifa, *x;
	size_t n = 0;

	if (getifaddrs(&ifa) < 0)
		return;
	for (x = ifa; x; x = x->ifa_next)
		n += x->ifa_addr && (x->ifa_addr->sa_family == AF_INET ||
				     x->ifa_addr->sa_family == AF_INET6);
	p->own = calloc(n ? n : 1, sizeof(*p->own));
	for (x = ifa; p->own && x; x = x->ifa_next) {
		if (!x->ifa_addr)
			continue;
		if (x->ifa_addr->sa_family == AF_INET)
			memcpy(&p->own[p->n_own++], x->ifa_addr, sizeof(struct sockaddr_in));
		else if (x->ifa_addr->sa_family == AF_INET6)
			memcpy(&p->own[p->n_own++], x->ifa_addr, sizeof(struct sockaddr_in6));
	}
	freeifaddrs(ifa);
}

static const char *env_lookup(const char *name)
{
	return getenv(name);
}

/* An --upstream-ca that cannot be read, or holds no certificate, is refused
 * before anything runs (ward-tls parses it when it starts, and refuses a
 * malformed one then, still before the command runs). */
static int check_ca_file(const char *path, struct ward_error **err)
{
	static const char begin[] = "-----BEGIN CERTIFICATE-----";
	char buf[16 * 1024 + sizeof(begin)];
	size_t have = 0;
	bool found = false;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno,
					    "--upstream-ca: open '%s'", path);
	/* read in blocks, keeping the tail of each so that a marker across
	 * two is still seen */
	while (!found && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		found = memmem(buf, have, begin, sizeof(begin) - 1) != NULL;
		if (have > sizeof(begin)) {
			memmove(buf, buf + have - sizeof(begin), sizeof(begin));
			have = sizeof(begin);
		}
	}
	close(fd);
	if (!found)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "--upstream-ca: no PEM certificate in '%s'", path);
	return 0;
}

struct ward_proxy *ward_proxy_new(const struct ward_netpolicy *policy, int log_fd,
				  struct ward_error **err)
{
	struct ward_proxy *p = calloc(1, sizeof(*p));

	if (!p) {
		ward_error_make(err, ENOMEM, "proxy");
		return NULL;
	}
	p->ep = -1;
	p->log_fd = log_fd;
	pthread_mutex_init(&p->mu, NULL);
	pipe_policy_init(p);
	/* an --upstream-ca that cannot be read is refused before anything runs */
	if (policy->upstream_ca && check_ca_file(policy->upstream_ca, err) < 0)
		goto fail;
	if (ward_netpolicy_copy(&p->policy, policy, err) < 0) {
		ward_netpolicy_init(&p->policy);
		goto fail;
	}
	/* credentials expanded, secrets read, stand-ins made: a missing
	 * variable fails here, before anything runs */
	p->rules = ward_netrules_new(&p->policy, env_lookup, err);
	if (!p->rules)
		goto fail;
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	p->res = calloc(1, sizeof(*p->res));
	if (p->ep < 0 || !p->res) {
		ward_error_make(err, p->ep < 0 ? errno : ENOMEM, "proxy");
		goto fail;
	}
	pthread_mutex_init(&p->res->mu, NULL);
	pthread_cond_init(&p->res->cv, NULL);
	p->res->refs = 1;
	p->res->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->res->efd < 0) {
		ward_error_make(err, errno, "eventfd");
		goto fail;
	}
	p->res_ep = (struct endpoint){ K_RESOLVER, NULL, p->res->efd, 0 };
	if (watch(p, &p->res_ep, EPOLLIN) < 0) {
		ward_error_make(err, errno, "epoll_ctl");
		goto fail;
	}
	own_addresses(p);
	return p;
fail:
	ward_proxy_free(p);
	return NULL;
}

void ward_proxy_finish(struct ward_proxy *p, struct ward_net_record **records, size_t *n)
{
	while (p->conns) {
		struct conn *c = p->conns;

		if (!c->rec.rule[0])
			snprintf(c->rec.rule, sizeof(c->rec.rule), "sandbox ended");
		else if (c->st != S_RELAY && c->st != S_REPLY)
			snprintf(c->rec.rule + strlen(c->rec.rule),
				 sizeof(c->rec.rule) - strlen(c->rec.rule), "; sandbox ended");
		conn_kill(p, c);
	}
	while (p->dead) {
		struct conn *c = p->dead;

		p->dead = c->next;
		conn_free(c);
	}
	mitm_reap(p, true);
	*records = p->records;
	*n = p->n_records;
	p->records = NULL;
	p->n_records = p->cap_records = 0;
}

void ward_proxy_free(struct ward_proxy *p)
{
	size_t i, n;
	struct ward_net_record *r;

	if (!p)
		return;
	ward_proxy_finish(p, &r, &n);
	free(r);
	for (i = 0; i < p->n_listeners; i++) {
		close_endpoint(p, p->listeners[i]);
		free(p->listeners[i]);
	}
	if (p->handover) {
		close_endpoint(p, p->handover);
		free(p->handover);
	}
	if (p->res) {
		if (p->res->efd >= 0 && p->ep >= 0)
			epoll_ctl(p->ep, EPOLL_CTL_DEL, p->res->efd, NULL);
		pthread_mutex_lock(&p->res->mu);
		p->res->stop = true;
		pthread_cond_signal(&p->res->cv);
		pthread_mutex_unlock(&p->res->mu);
		resolver_unref(p->res);
	}
	if (p->ep >= 0)
		close(p->ep);
	ward_netrules_free(p->rules);
	free(p->own);
	ward_netpolicy_release(&p->policy);
	ward_tlshelper_free(p->tls);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
