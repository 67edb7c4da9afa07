/* argv-recorder — a stand-in for every program in the parser's agreement
 * test: symlinked under each command name, it appends its argv to the file
 * named by $WARD_RECORD_LOG as one record, "ARGC\0ARG0\0ARG1\0…", in a single
 * O_APPEND write (so the processes of a pipeline do not interleave), prints
 * nothing, reads nothing, and exits 0 — or 1 when it runs as "fail". */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *log = getenv("WARD_RECORD_LOG");
	const char *base = strrchr(argv[0], '/');
	size_t len = 16, n;
	char *buf;
	int fd, i;

	base = base ? base + 1 : argv[0];
	for (i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	buf = malloc(len);
	if (!buf || !log)
		return 99;
	n = (size_t)snprintf(buf, len, "%d", argc) + 1;
	for (i = 0; i < argc; i++) {
		size_t k = strlen(argv[i]) + 1;

		memcpy(buf + n, argv[i], k);
		n += k;
	}
	fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, buf, n) != (ssize_t)n)
		return 98;
	close(fd);
	return strcmp(base, "fail") == 0 ? 1 : 0;
}
