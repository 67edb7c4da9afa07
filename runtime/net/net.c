/* net.c — the sandbox's link to the proxy; see net-internal.h. */
#include "runtime/net/net-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>

#include "runtime/util/util-internal.h"

#define HUB_IF "ward-hub"
#define INNER_IF "eth0"
/* The pair carries nothing but the sandbox's connections to the proxy, so
 * it takes loopback's kind of MTU (the most a veth allows) rather than
 * Ethernet's 1500: segments of ~64 KiB, not 1448 bytes, and as many times
 * fewer ACKs and per-segment work on both ends. */
#define VETH_MTU 65535

static int finish(struct net_setup *n, struct ward_error **err);

void ward_net_init(struct net_setup *n)
{
	memset(n, 0, sizeof(*n));
	n->handover[0] = n->handover[1] = n->go[0] = n->go[1] = n->listener = -1;
}

void ward_net_release(struct net_setup *n)
{
	if (n->job)
		finish(n, NULL); /* never attached: called off */
	int *fds[] = { &n->handover[0], &n->handover[1], &n->go[0], &n->go[1], &n->listener };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fds); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}

/* veth needs both: CAP_NET_ADMIN for the links, CAP_SYS_ADMIN for the
 * namespaces the thread enters. */
static bool can_veth(void)
{
	cap_t caps = cap_get_proc();
	cap_flag_value_t a = CAP_CLEAR, b = CAP_CLEAR;

	if (!caps)
		return false;
	cap_get_flag(caps, CAP_NET_ADMIN, CAP_EFFECTIVE, &a);
	cap_get_flag(caps, CAP_SYS_ADMIN, CAP_EFFECTIVE, &b);
	cap_free(caps);
	return a == CAP_SET && b == CAP_SET;
}

int ward_net_prepare(struct net_setup *n, const struct ward_config *cfg, struct ward_error **err)
{
	uint32_t base;

	n->mode = cfg->net;
	if (cfg->net != WARD_NET_PROXY)
		return 0;
	n->port = cfg->proxy_port;
	switch (cfg->net_transport) {
	case WARD_NET_TRANSPORT_AUTO:
		n->veth = can_veth();
		break;
	case WARD_NET_TRANSPORT_VETH:
		if (!can_veth())
			return ward_error_make(err, EPERM, "network transport veth needs "
							   "CAP_NET_ADMIN and CAP_SYS_ADMIN");
		n->veth = true;
		break;
	case WARD_NET_TRANSPORT_LOOPBACK:
		n->veth = false;
		break;
	}
	if (n->veth) {
		memcpy(&base, cfg->net_subnet.addr, 4);
		base = ntohl(base);
		n->hub.s_addr = htonl(base + 1);
		n->inner.s_addr = htonl(base + 2);
		n->prefix = cfg->net_subnet.prefix;
		if (pipe2(n->go, O_CLOEXEC) < 0)
			return ward_error_make(err, errno, "pipe");
	} else {
		n->hub.s_addr = htonl(INADDR_LOOPBACK);
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, n->handover) < 0)
			return ward_error_make(err, errno, "socketpair");
	}
	{
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &n->hub, a, sizeof(a));
		snprintf(n->proxy_url, sizeof(n->proxy_url), "http://%s:%u", a, n->port);
	}
	return 0;
}

size_t ward_net_env(struct net_setup *n, const char **out, size_t max)
{
	static const char *const names[] = {
		"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
		"npm_config_proxy", "npm_config_https_proxy", "PIP_PROXY",
	};
	size_t i, k = 0;

	if (n->mode != WARD_NET_PROXY)
		return 0;
	for (i = 0; i < ARRAY_SIZE(names) && k < max; i++) {
		snprintf(n->env[k], sizeof(n->env[k]), "%s=%s", names[i], n->proxy_url);
		out[k] = n->env[k];
		k++;
	}
	/* git reads http.proxy from its configuration; these variables are
	 * configuration (git >= 2.31). */
	if (k + 5 <= max) {
		snprintf(n->env[k], sizeof(n->env[k]), "NO_PROXY=localhost,127.0.0.1,::1");
		out[k] = n->env[k], k++;
		snprintf(n->env[k], sizeof(n->env[k]), "no_proxy=localhost,127.0.0.1,::1");
		out[k] = n->env[k], k++;
		snprintf(n->env[k], sizeof(n->env[k]), "GIT_CONFIG_COUNT=1");
		out[k] = n->env[k], k++;
		snprintf(n->env[k], sizeof(n->env[k]), "GIT_CONFIG_KEY_0=http.proxy");
		out[k] = n->env[k], k++;
		snprintf(n->env[k], sizeof(n->env[k]), "GIT_CONFIG_VALUE_0=%s", n->proxy_url);
		out[k] = n->env[k], k++;
	}
	return k;
}

/* ---- the veth thread ----------------------------------------------------- */

/* Shared by the supervisor's thread and the network thread; the pipe hands
 * the child's pid and pidfd over (or, closed empty, calls it off). */
struct veth_job {
	struct net_setup *n;
	pthread_t thread;
	int handoff[2];
	pid_t pid;
	int pidfd;
	int listener;
	int code;
	char what[256];
};

static int fail(struct veth_job *j, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct veth_job *j, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->what, sizeof(j->what), fmt, ap);
	va_end(ap);
	j->code = code;
	return -1;
}

/* libnl's errors are its own numbers: say them in the message. */
static int nl_fail(struct veth_job *j, int nlerr, const char *what)
{
	return fail(j, 0, "%s: %s", what, nl_geterror(nlerr));
}

static int set_up(struct veth_job *j, const char *ifname)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return fail(j, errno, "socket");
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_mtu = VETH_MTU;
	if (ioctl(s, SIOCSIFMTU, &ifr) < 0) {
		int e = errno;

		close(s);
		return fail(j, e, "set the MTU of '%s'", ifname);
	}
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) < 0)) {
		int e = errno;

		close(s);
		return fail(j, e, "bring up '%s'", ifname);
	}
	close(s);
	return 0;
}

static int add_addr(struct veth_job *j, struct nl_sock *sk, const char *ifname,
		    struct in_addr a, int prefix)
{
	struct rtnl_addr *addr = rtnl_addr_alloc();
	struct nl_addr *local = nl_addr_build(AF_INET, &a, 4);
	unsigned idx = if_nametoindex(ifname);
	int rc;

	if (!idx) {
		rc = fail(j, errno, "find '%s'", ifname);
		goto out;
	}
	if (!addr || !local) {
		rc = fail(j, ENOMEM, "address");
		goto out;
	}
	nl_addr_set_prefixlen(local, prefix);
	rtnl_addr_set_ifindex(addr, (int)idx);
	rtnl_addr_set_local(addr, local);
	rc = rtnl_addr_add(sk, addr, 0);
	if (rc < 0)
		rc = nl_fail(j, rc, "add an address to the veth");
out:
	if (local)
		nl_addr_put(local);
	if (addr)
		rtnl_addr_put(addr);
	return rc;
}

static int add_default_route(struct veth_job *j, struct nl_sock *sk, const char *ifname,
			     struct in_addr gw)
{
	struct rtnl_route *r = rtnl_route_alloc();
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	struct in_addr any = { 0 };
	struct nl_addr *dst = nl_addr_build(AF_INET, &any, 4), *via = nl_addr_build(AF_INET, &gw, 4);
	unsigned idx = if_nametoindex(ifname);
	int rc;

	if (!r || !nh || !dst || !via || !idx) {
		rc = fail(j, idx ? ENOMEM : errno, "default route");
		goto out;
	}
	nl_addr_set_prefixlen(dst, 0);
	rtnl_route_set_family(r, AF_INET);
	rtnl_route_set_dst(r, dst);
	rtnl_route_set_table(r, RT_TABLE_MAIN);
	rtnl_route_set_protocol(r, RTPROT_BOOT);
	rtnl_route_set_scope(r, RT_SCOPE_UNIVERSE);
	rtnl_route_nh_set_ifindex(nh, (int)idx);
	rtnl_route_nh_set_gateway(nh, via);
	rtnl_route_add_nexthop(r, nh);
	nh = NULL; /* the route owns it */
	rc = rtnl_route_add(sk, r, NLM_F_CREATE | NLM_F_EXCL);
	if (rc < 0)
		rc = nl_fail(j, rc, "add the sandbox's default route");
out:
	if (nh)
		rtnl_route_nh_free(nh);
	if (r)
		rtnl_route_put(r);
	if (dst)
		nl_addr_put(dst);
	if (via)
		nl_addr_put(via);
	return rc;
}

static struct nl_sock *nl_open(struct veth_job *j)
{
	struct nl_sock *sk = nl_socket_alloc();
	int rc;

	if (!sk) {
		fail(j, ENOMEM, "netlink socket");
		return NULL;
	}
	rc = nl_connect(sk, NETLINK_ROUTE);
	if (rc < 0) {
		nl_fail(j, rc, "netlink connect");
		nl_socket_free(sk);
		return NULL;
	}
	return sk;
}

static void sysctl(const char *path, const char *value)
{
	/* /proc/sys/net is the writing thread's namespace's */
	ward_write_file(path, value);
}

/* Before the sandbox exists: the hub and the proxy's socket in it. The
 * socket listens on every address of the hub, which will only ever have
 * the hub end of the pair. */
static int build_hub(struct veth_job *j, struct nl_sock **sk)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(j->n->port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	int one = 1;

	if (unshare(CLONE_NEWNET) < 0)
		return fail(j, errno, "unshare the proxy's network namespace");
	/* A fresh namespace may inherit forwarding from the initial one
	 * (net.core.devconf_inherit_init_net): off, and no IPv6 on the hub
	 * end, so the hub answers nothing but the proxy's port. */
	sysctl("/proc/sys/net/ipv4/ip_forward", "0");
	sysctl("/proc/sys/net/ipv6/conf/all/forwarding", "0");
	sysctl("/proc/sys/net/ipv6/conf/default/disable_ipv6", "1");
	j->listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (j->listener < 0 ||
	    setsockopt(j->listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(j->listener, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(j->listener, 1024) < 0)
		return fail(j, errno, "the proxy's listening socket");
	*sk = nl_open(j);
	return *sk ? 0 : -1;
}

/* After clone3: the pair, the hub's end, then the sandbox's end. */
static int build(struct veth_job *j, struct nl_sock *sk)
{
	struct net_setup *n = j->n;
	int rc;

	rc = rtnl_link_veth_add(sk, HUB_IF, INNER_IF, j->pid);
	if (rc < 0) {
		nl_fail(j, rc, "create the veth pair");
		goto out;
	}
	rc = -1;
	if (set_up(j, HUB_IF) < 0 || add_addr(j, sk, HUB_IF, n->hub, n->prefix) < 0)
		goto out;
	nl_socket_free(sk);
	sk = NULL;

	if (setns(j->pidfd, CLONE_NEWNET) < 0) {
		fail(j, errno, "enter the sandbox's network namespace");
		goto out;
	}
	sk = nl_open(j);
	if (!sk)
		goto out;
	if (set_up(j, INNER_IF) < 0 || add_addr(j, sk, INNER_IF, n->inner, n->prefix) < 0 ||
	    add_default_route(j, sk, INNER_IF, n->hub) < 0)
		goto out;
	rc = 0;
out:
	if (sk)
		nl_socket_free(sk);
	return rc;
}

static void *veth_main(void *arg)
{
	struct veth_job *j = arg;
	struct nl_sock *sk = NULL;
	int hub = build_hub(j, &sk);
	ssize_t got;

	/* the child's pid and pidfd, or end of file: no sandbox after all */
	do
		got = read(j->handoff[0], &j->pid, sizeof(j->pid));
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof(j->pid) && hub == 0 &&
	    read(j->handoff[0], &j->pidfd, sizeof(j->pidfd)) == (ssize_t)sizeof(j->pidfd)) {
		build(j, sk);
		return NULL;
	}
	if (sk)
		nl_socket_free(sk);
	return NULL;
}

int ward_net_start(struct net_setup *n, struct ward_error **err)
{
	struct veth_job *j;
	sigset_t all, old;
	int rc;

	if (n->mode != WARD_NET_PROXY || !n->veth)
		return 0;
	j = calloc(1, sizeof(*j));
	if (!j)
		return ward_error_make(err, ENOMEM, "network");
	j->n = n;
	j->listener = -1;
	if (pipe2(j->handoff, O_CLOEXEC) < 0) {
		free(j);
		return ward_error_make(err, errno, "pipe");
	}
	/* A thread of its own: namespaces change for it alone, and it ends
	 * with them; the caller's thread stays in the host's namespace, where
	 * the proxy connects upstream. It builds the hub while the caller
	 * clones the sandbox. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&j->thread, NULL, veth_main, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(j->handoff[0]);
		close(j->handoff[1]);
		free(j);
		return ward_error_make(err, rc, "start the network thread");
	}
	n->job = j;
	return 0;
}

/* Wait for the thread; its listener (if any) is closed when it failed. */
static int finish(struct net_setup *n, struct ward_error **err)
{
	struct veth_job *j = n->job;
	int rc = 0;

	close(j->handoff[1]);
	pthread_join(j->thread, NULL);
	close(j->handoff[0]);
	n->job = NULL;
	if (j->what[0] || !err) {
		if (j->what[0])
			rc = ward_error_make(err, j->code, "network: %s", j->what);
		if (j->listener >= 0)
			close(j->listener);
	} else {
		n->listener = j->listener;
	}
	free(j);
	return rc;
}

int ward_net_attach(struct net_setup *n, pid_t pid, int pidfd, struct ward_error **err)
{
	struct veth_job *j = n->job;

	if (!j)
		return 0;
	if (write(j->handoff[1], &pid, sizeof(pid)) != (ssize_t)sizeof(pid) ||
	    write(j->handoff[1], &pidfd, sizeof(pidfd)) != (ssize_t)sizeof(pidfd)) {
		int e = errno;

		finish(n, NULL);
		return ward_error_make(err, e, "hand the sandbox to the network thread");
	}
	if (finish(n, err) < 0)
		return -1;
	if (write(n->go[1], "g", 1) != 1)
		return ward_error_make(err, errno, "release the sandbox's init");
	close(n->go[1]);
	n->go[1] = -1;
	return 0;
}
