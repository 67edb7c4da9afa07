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

/* One record as a JSON object (result and log share it). */
json_t *ward_net_record_json(const struct ward_net_record *r);

#endif
