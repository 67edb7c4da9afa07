/* hog — uses resources on purpose, for the limit tests.
 *
 *   hog alloc MB          allocate MB MiB, touch every page, print "allocated MB"
 *   hog spin SECONDS      burn CPU for SECONDS of wall time, print "cpu_ms N" (its own
 *                         user + system time)
 *   hog procs N SECONDS   N children sleeping SECONDS, then wait for them
 *   hog forkbomb          fork without end (retrying when fork fails)
 *   hog write MB FILE     write MB MiB of zeros to FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "alloc") == 0) {
		size_t mb = strtoul(argv[2], NULL, 10), i;
		char *p = malloc(mb << 20);

		if (!p) {
			perror("malloc");
			return 1;
		}
		for (i = 0; i < mb << 20; i += 4096)
			p[i] = 1;
		printf("allocated %zu\n", mb);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "spin") == 0) {
		double end = now() + atof(argv[2]);
		volatile unsigned long x = 0;

		struct rusage ru;

		while (now() < end)
			for (int i = 0; i < 100000; i++)
				x++;
		getrusage(RUSAGE_SELF, &ru);
		printf("cpu_ms %ld\n", (long)(ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 +
					      ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000));
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "procs") == 0) {
		int n = atoi(argv[2]), i;
		unsigned secs = (unsigned)atoi(argv[3]);

		for (i = 0; i < n; i++) {
			pid_t pid = fork();

			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (pid == 0) {
				sleep(secs);
				_exit(0);
			}
		}
		while (wait(NULL) > 0)
			;
		printf("forked %d\n", n);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "forkbomb") == 0) {
		for (;;)
			if (fork() < 0)
				usleep(10000);
	}
	if (argc == 4 && strcmp(argv[1], "write") == 0) {
		static char buf[1 << 20];
		int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644), i;

		if (fd < 0) {
			perror("open");
			return 1;
		}
		for (i = 0; i < atoi(argv[2]); i++)
			if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
				fprintf(stderr, "write: %s\n", strerror(errno));
				return 1;
			}
		return 0;
	}
	fprintf(stderr, "usage: hog alloc MB | spin SECONDS | procs N SECONDS | forkbomb | "
			"write MB FILE\n");
	return 2;
}
