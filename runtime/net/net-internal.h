/* net-internal.h — how the sandbox's network namespace is tied to the proxy.
 *
 * veth transport (CAP_NET_ADMIN and CAP_SYS_ADMIN): a short thread of the
 * supervisor, started just before clone3, unshares a network namespace of
 * its own (the "hub": fresh, so it forwards nothing and holds no other
 * listener) and opens the proxy's listening socket there; once the child
 * exists it makes a veth pair with libnl-route-3 whose peer is created
 * directly in the sandbox's namespace, gives the hub end the subnet's first
 * address, then enters the sandbox's
 * namespace (setns on the pidfd) to give the peer the second address, bring
 * it up and route everything to the hub end. The thread ends; the hub lives
 * as long as the proxy's sockets, the pair as long as the sandbox's
 * namespace: nothing is deleted on the command's path, nothing outlives
 * ward. init waits for one byte on the go pipe before it runs the command.
 *
 * loopback transport (no privilege): init opens a listening socket on
 * 127.0.0.1:PORT of its own namespace and sends it over a UNIX socket
 * (SCM_RIGHTS); the supervisor accepts on it directly. */
#ifndef WARD_NET_INTERNAL_H
#define WARD_NET_INTERNAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "ward/sandbox.h"

/* A growing byte buffer, always NUL-terminated (the proxy's heads and the
 * rules' rewritten requests are built in one): a failed allocation sets
 * failed, and every later put is a no-op, so a builder checks once at
 * the end. */
struct net_out {
	char *buf;
	size_t len, cap;
	bool failed;
};

static inline void net_out_put(struct net_out *o, const void *s, size_t n)
{
	if (o->failed)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *g = realloc(o->buf, cap);

		if (!g) {
			o->failed = true;
			return;
		}
		o->buf = g;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

struct veth_job;

struct net_setup {
	enum ward_net_mode mode;
	bool veth;             /* else the loopback hand-over */
	uint16_t port;
	struct in_addr hub, inner;
	int prefix;
	char proxy_url[64];    /* "http://10.0.2.1:3128" */
	int handover[2];       /* loopback: [0] the supervisor's, [1] init's */
	int go[2];             /* veth: init reads [0], the supervisor writes [1] */
	int listener;          /* veth: the proxy's socket in the hub */
	struct veth_job *job;  /* veth: the network thread, between start and attach */
	char env[20][96];      /* ward_net_env()'s strings */
};

/* Decide the transport and make the fds init needs. Mode none or host:
 * nothing. ExecutionFailed when veth is asked without the privilege. */
int ward_net_prepare(struct net_setup *n, const struct ward_config *cfg,
		     struct ward_error **err);

/* Before clone3 (veth only): start the network thread, which builds the
 * hub and the proxy's socket meanwhile. */
int ward_net_start(struct net_setup *n, struct ward_error **err);

/* After clone3 (veth only): the thread builds the pair for the child, then
 * init is released. The proxy's listener is left in n->listener. A thread
 * never attached is called off by ward_net_release(). */
int ward_net_attach(struct net_setup *n, pid_t pid, int pidfd, struct ward_error **err);

/* The proxy variables for the sandbox's environment: up to max "K=V"
 * strings kept in n; returns how many. */
size_t ward_net_env(struct net_setup *n, const char **out, size_t max);

void ward_net_init(struct net_setup *n);
void ward_net_release(struct net_setup *n);


/* ---- proxy.c: the proxy engine the supervisor runs in its event loop.
 *
 * The proxy owns an epoll instance; the supervisor watches that one fd and
 * calls ward_proxy_dispatch() when it is readable, and wakes for
 * ward_proxy_deadline(). Listeners are sockets the sandbox connects to (in
 * the proxy's private namespace, or on the sandbox's own loopback, received
 * over a UNIX socket). Upstream connections are made in the namespace of the
 * thread that created the proxy (the host's). Name resolution runs on one
 * resolver thread, which reports through an eventfd, so the loop never
 * blocks. */

#include <jansson.h>

#include "ward/netpolicy.h"
#include "ward/proxy.h"

struct ward_proxy;

/* A proxy for the policy (copied; credentials expanded from the environment
 * now). log_fd (or -1) receives one JSON line per record; it stays the
 * caller's. InvalidParameters for a credential naming an unset variable. */
struct ward_proxy *ward_proxy_new(const struct ward_netpolicy *policy, int log_fd,
				  struct ward_error **err);

/* The secrets' variables for the sandbox's environment: up to max
 * "NAME=stand-in" strings, the proxy's; returns how many. */
size_t ward_proxy_env(const struct ward_proxy *p, const char **out, size_t max);

/* Accept connections on a listening socket (the proxy takes it). */
int ward_proxy_add_listener(struct ward_proxy *p, int fd, struct ward_error **err);

/* Receive one listening socket over this UNIX socket (SCM_RIGHTS), then
 * accept on it. The proxy takes the UNIX socket. */
int ward_proxy_add_handover(struct ward_proxy *p, int unix_fd, struct ward_error **err);

/* The fd to watch for readability. */
int ward_proxy_fd(const struct ward_proxy *p);

/* Handle what is ready, without blocking. */
void ward_proxy_dispatch(struct ward_proxy *p);

/* The earliest monotonic time (ns) a connection times out, or 0 for none;
 * ward_proxy_dispatch() also expires what is due. */
long long ward_proxy_deadline(const struct ward_proxy *p);

/* TLS interception (only when ward_netpolicy_intercepts_any()): start the
 * run's TLS helper (ward-tls, below), which makes the run's CA, and write
 * the sandbox's trust bundle to bundle_fd (or -1): the system's bundle, then
 * the CA's certificate. Called after the sandbox's init was cloned (init
 * closes what it inherits; the helper is no child of init's). Until this is
 * called an intercepted CONNECT is answered 502. ExecutionFailed naming the
 * helper's path when it cannot be found or started; InvalidParameters from
 * the helper for an unusable --upstream-ca. */
int ward_proxy_start_tls(struct ward_proxy *p, int bundle_fd, struct ward_error **err);

/* The run's CA certificate (PEM), or NULL before ward_proxy_start_tls(). */
const char *ward_proxy_ca_pem(const struct ward_proxy *p);

/* ---- ward-tls, the TLS helper ------------------------------------------
 *
 * Interception's TLS runs in a program of its own, ward-tls
 * (runtime/tls/), one process per run that intercepts, started by
 * ward_proxy_start_tls(). Two reasons. OpenSSL in the ward binary cost every
 * command, intercepting or not, its start-up (about a hundred page faults
 * of relocations in a static-PIE binary); a run that intercepts now pays it
 * once, in the helper. And the run's CA key lives only in the helper, which
 * gives up the filesystem (Landlock) and the network once it has loaded
 * its trust store: the supervisor, which parses every request, never holds it.
 *
 * The helper terminates both TLS legs of each intercepted connection and
 * hands the supervisor plaintext: the supervisor connects to the real
 * server and checks the address as for a tunnel, answers the CONNECT, then
 * sends the helper one job (struct ward_tls_job) on the control socket with
 * four descriptors — the client's socket, the server's, and one end each of
 * two socket pairs, the client's plaintext and the server's. The helper
 * makes both handshakes at once (the client's with a leaf of the run's CA
 * for the CONNECT host, the server's verified against the system's store
 * and --upstream-ca), writes a struct ward_tls_status as the first bytes of
 * the server's plaintext, and relays until both sides are done. The
 * supervisor keeps the other ends and reads and writes HTTP there as it
 * does for plain HTTP, with the same rules.
 *
 * Control socket: SOCK_SEQPACKET, the helper's fd 3. The helper's first
 * message is a struct ward_tls_hello followed by the CA certificate (PEM),
 * or by the reason it cannot start. The supervisor closing it ends the
 * helper and every connection it relays. */

#define WARD_TLS_HELPER_NAME "ward-tls"
#define WARD_TLS_PROTOCOL 0x77746c02u /* "wtl" 2: both programs from one build */
#define WARD_TLS_REASON_MAX 232

struct ward_tls_hello {
	uint32_t protocol;
	uint32_t size[3];  /* sizeof the hello, the job, the status: one build's layout */
	int32_t ok;        /* 1: the CA certificate (PEM) follows; 0: the reason */
	int32_t kind;      /* when not ok: a WARD_ERR_* kind */
	int32_t errnum;
};

struct ward_tls_job {
	uint32_t protocol;
	uint16_t port;
	uint8_t literal;   /* host is an IP literal */
	char host[256];
};

/* Passing a body. A job's fifth descriptor is one end of a SOCK_SEQPACKET
 * pair whose other end the supervisor's thread for the connection keeps.
 * For a long response body framed by its length, the supervisor may ask
 * the helper to carry it from the server's leg to the client's itself,
 * decrypted and encrypted again without the plaintext sockets: the bytes
 * a rule would look at (the request, the response's head) still all go
 * through the supervisor; a body's bytes it only counted.
 *
 *   supervisor: WARD_TLS_PASS    a = bytes it has read of the server's
 *                                plaintext, b = bytes it has written to
 *                                the client's, len = body bytes to come
 *   helper:     WARD_TLS_PASS_DRAIN   a = how many of them the server's
 *                                plaintext holds already: the supervisor
 *                                relays those itself, the helper the rest
 *               WARD_TLS_PASS_REFUSE  (more than the body is there, or no
 *                                ring to be had): the supervisor relays
 *                                the body as before
 *   helper:     WARD_TLS_PASS_DONE    a = bytes it passed, ok = all of them
 *
 * The helper's client leg sends the supervisor's plaintext up to b plus
 * the drained count, then the passed bytes, then the supervisor's again.
 * The supervisor asks nothing else until DONE; the pair's end (either
 * side's) ends the connection. */
enum {
	WARD_TLS_PASS = 1,
	WARD_TLS_PASS_DRAIN,
	WARD_TLS_PASS_REFUSE,
	WARD_TLS_PASS_DONE,
};

struct ward_tls_pass {
	uint32_t kind;
	uint32_t ok;
	uint64_t a, b, len;
};

struct ward_tls_status {
	uint32_t protocol;
	uint8_t upstream_ok, client_ok;
	uint8_t sni_refused; /* the client's ClientHello named another server */
	char upstream_reason[WARD_TLS_REASON_MAX];
	char client_reason[WARD_TLS_REASON_MAX];
	char sni[256];
};

struct ward_tlshelper;

/* Start the helper: found as $WARD_TLS_HELPER (ward's own environment: the
 * person's, for a library host or a test), else beside the running program,
 * else in WARD_LIBEXECDIR/ward; given upstream_ca (or NULL) and, from
 * ward's environment, SSL_CERT_FILE and SSL_CERT_DIR. Waits for its hello.
 * ExecutionFailed naming where it looked, or what it said. */
int ward_tlshelper_start(const char *upstream_ca, struct ward_tlshelper **out,
			 struct ward_error **err);

/* The run's CA certificate, PEM (the helper's). */
const char *ward_tlshelper_ca_pem(const struct ward_tlshelper *h);

/* Hand one connection over: cl_fd and up_fd are sent (the caller still
 * closes its copies); *cl_plain and *up_plain are the caller's ends of the
 * plaintext, *pass its end of the pass socket (see "Passing a body"), all
 * blocking, close-on-exec. Returns 0, or -errno (the helper is gone:
 * EPIPE). Any thread. */
int ward_tlshelper_hand(struct ward_tlshelper *h, const char *host, bool literal,
			uint16_t port, int cl_fd, int up_fd, int *cl_plain, int *up_plain,
			int *pass);

/* Read the status the helper writes first on up_plain, by deadline
 * (monotonic ns). 0, or -1 (the helper went away, or a timeout). */
int ward_tlshelper_status(int up_plain, long long deadline, struct ward_tls_status *st);

/* End the helper (every connection it relays ends) and reap it. */
void ward_tlshelper_free(struct ward_tlshelper *h);

/* Close every connection (their records are completed) and hand over the
 * records (malloc'd array, caller frees). */
void ward_proxy_finish(struct ward_proxy *p, struct ward_net_record **records, size_t *n);

void ward_proxy_free(struct ward_proxy *p);

/* Pipe sizing for bulk tunnels (pure; proxy.c says why). */
#define WARD_PIPE_GROW_AFTER (4ULL << 20)  /* bytes a direction carries before it grows */
#define WARD_PIPE_BIG_MAX (1024 * 1024)     /* a grown pipe's size at most */
#define WARD_PIPE_BUDGET_UNLIMITED (64ULL << 20) /* the budget when the soft limit is off */

/* From /proc/sys/fs/pipe-max-size, /proc/sys/fs/pipe-user-pages-soft (0: no
 * limit) and the page size: a grown pipe's size (*big) and what all grown
 * pipes of one proxy may hold together (*budget: a quarter of the limit). */
void ward_pipe_policy(long max_size, long soft_pages, long page, size_t *big, size_t *budget);

/* The size to give a pipe whose direction has carried `moved` bytes while
 * the proxy's grown pipes hold `grown`, or 0 to leave it as it is. */
size_t ward_pipe_grow_size(uint64_t moved, size_t grown, size_t big, size_t budget);

/* One record as a JSON object (result and log share it). */
json_t *ward_net_record_json(const struct ward_net_record *r);

#endif
