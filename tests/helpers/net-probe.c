/* net-probe — network attempts from inside a sandbox, one line each.
 *
 *   net-probe tcp ADDR PORT              connect (0.5 s); "connected" or the error
 *   net-probe udp ADDR PORT              send "ping", wait 0.5 s for any reply
 *   net-probe many N PROXY PORT HOST     N concurrent "GET http://HOST/" through
 *                                        the proxy at PROXY:PORT; "N ok" when every
 *                                        one got "HTTP/1.1 200"
 * Exit 0 when the attempt succeeded, 1 when it did not, 2 on bad usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int addr_of(const char *a, const char *port, struct sockaddr_in *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(port));
	return inet_pton(AF_INET, a, &sa->sin_addr) == 1 ? 0 : -1;
}

static int tcp(const char *a, const char *port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), e = 0;
	socklen_t l = sizeof(e);

	if (fd < 0 || addr_of(a, port, &sa) < 0)
		return 2;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		struct pollfd p = { fd, POLLOUT, 0 };

		if (errno != EINPROGRESS) {
			printf("tcp %s:%s %s\n", a, port, strerror(errno));
			return 1;
		}
		if (poll(&p, 1, 500) == 0) {
			printf("tcp %s:%s timed out\n", a, port);
			return 1;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &l);
		if (e) {
			printf("tcp %s:%s %s\n", a, port, strerror(e));
			return 1;
		}
	}
	printf("tcp %s:%s connected\n", a, port);
	return 0;
}

static int udp(const char *a, const char *port)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct pollfd p = { fd, POLLIN, 0 };
	char buf[64];

	if (fd < 0 || addr_of(a, port, &sa) < 0)
		return 2;
	if (sendto(fd, "ping", 4, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		printf("udp %s:%s %s\n", a, port, strerror(errno));
		return 1;
	}
	if (poll(&p, 1, 500) == 1 && recv(fd, buf, sizeof(buf), 0) > 0) {
		printf("udp %s:%s reply\n", a, port);
		return 0;
	}
	printf("udp %s:%s no reply\n", a, port);
	return 1;
}

static int many(int n, const char *proxy, const char *port, const char *host)
{
	struct sockaddr_in sa;
	struct pollfd *p = calloc((size_t)n, sizeof(*p));
	char **got = calloc((size_t)n, sizeof(*got));
	size_t *len = calloc((size_t)n, sizeof(*len));
	char req[512];
	int i, open_n = n, ok = 0;

	if (!p || !got || !len || addr_of(proxy, port, &sa) < 0)
		return 2;
	snprintf(req, sizeof(req), "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", host, host);
	/* all connected and sent before any answer is read */
	for (i = 0; i < n; i++) {
		p[i].fd = socket(AF_INET, SOCK_STREAM, 0);
		p[i].events = POLLIN;
		got[i] = calloc(1, 64);
		if (p[i].fd < 0 || connect(p[i].fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
		    write(p[i].fd, req, strlen(req)) != (ssize_t)strlen(req)) {
			printf("connection %d: %s\n", i, strerror(errno));
			return 1;
		}
	}
	while (open_n > 0) {
		if (poll(p, (nfds_t)n, 10000) <= 0) {
			printf("timed out with %d open\n", open_n);
			return 1;
		}
		for (i = 0; i < n; i++) {
			char buf[4096];
			ssize_t r;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			r = read(p[i].fd, buf, sizeof(buf));
			if (r > 0) {
				size_t take = len[i] < 63 ? 63 - len[i] : 0;

				if ((size_t)r < take)
					take = (size_t)r;
				memcpy(got[i] + len[i], buf, take);
				len[i] += take;
				continue;
			}
			close(p[i].fd);
			p[i].fd = -1;
			open_n--;
			ok += strncmp(got[i], "HTTP/1.1 200", 12) == 0;
		}
	}
	printf("%d ok\n", ok);
	return ok == n ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && strcmp(argv[1], "tcp") == 0)
		return tcp(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "udp") == 0)
		return udp(argv[2], argv[3]);
	if (argc == 6 && strcmp(argv[1], "many") == 0)
		return many(atoi(argv[2]), argv[3], argv[4], argv[5]);
	fprintf(stderr, "usage: net-probe tcp|udp ADDR PORT | many N PROXY PORT HOST\n");
	return 2;
}
