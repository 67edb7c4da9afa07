/* proxy-internal.h — the proxy engine the supervisor runs in its event loop.
 *
 * The proxy owns an epoll instance; the supervisor watches that one fd and
 * calls ward_proxy_dispatch() when it is readable, and wakes for
 * ward_proxy_deadline(). Listeners are sockets the sandbox connects to (in
 * the proxy's private namespace, or on the sandbox's own loopback, received
 * over a UNIX socket). Upstream connections are made in the namespace of the
 * thread that created the proxy (the host's). Name resolution runs on one
 * resolver thread, which reports through an eventfd, so the loop never
 * blocks. */
#ifndef WARD_PROXY_INTERNAL_H
#define WARD_PROXY_INTERNAL_H

#include <jansson.h>

#include "ward/netpolicy.h"
#include "ward/proxy.h"

struct ward_proxy;

/* A proxy for the policy (copied; credentials expanded from the environment
 * now). log_fd (or -1) receives one JSON line per record; it stays the
 * caller's. InvalidParameters for a credential naming an unset variable. */
struct ward_proxy *ward_proxy_new(const struct ward_netpolicy *policy, int log_fd,
				  struct ward_error **err);

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
