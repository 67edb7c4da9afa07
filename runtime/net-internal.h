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
#include <sys/types.h>

#include "ward/sandbox.h"

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

#endif
