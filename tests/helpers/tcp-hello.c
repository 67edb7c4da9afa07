/* tcp-hello PORTFILE [MARK] — a small server for session tests: listens on
 * 127.0.0.1, a port the kernel picks, written to PORTFILE once it listens;
 * answers every connection with "hello\n" and closes it, forever. MARK is
 * only there to be found in the process list.
 * tcp-hello -c PORTFILE — the client: connects to that port, copies what it
 * reads to stdout. */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	FILE *f;

	if (argc == 3 && strcmp(argv[1], "-c") == 0) {
		char buf[256];
		ssize_t n;
		int port = 0;

		f = fopen(argv[2], "r");
		if (!f || fscanf(f, "%d", &port) != 1)
			return 1;
		a.sin_port = htons((unsigned short)port);
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
			return 1;
		while ((n = read(s, buf, sizeof(buf))) > 0)
			if (write(1, buf, (size_t)n) != n)
				return 1;
		return 0;
	}
	if (argc < 2 || s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(s, 16) < 0 ||
	    getsockname(s, (struct sockaddr *)&a, &al) < 0)
		return 1;
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", ntohs(a.sin_port));
	fclose(f);
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c < 0)
			continue;
		if (write(c, "hello\n", 6) != 6) {
			/* the client left: nothing to do */
		}
		close(c);
	}
}
