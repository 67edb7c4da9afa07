/* spare-tamper COUNTFILE SECONDS — a background job of a shared session
 * going after the session's spare shell (a bash started before its command,
 * waiting to read its script from a memfd, its fd 4): for SECONDS it looks
 * for such a shell (its command line holds "__ward_go"), reopens that memfd
 * through /proc/PID/fd/4, which a process of the same user may, grows it,
 * keeps a writable shared mapping of it, and writes a script of its own there
 * again and again — before, while and after the leader writes the real one.
 * COUNTFILE gets a line per spare it got hold of. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#define MAX_MAPS 16

static const char inject[] = "echo INJECTED; exit 0 #";

static int is_spare(const char *pid)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = '\0';
	return strstr(buf, "__ward_go") != NULL;
}

int main(int argc, char **argv)
{
	char *maps[MAX_MAPS];
	int pids[MAX_MAPS], n_maps = 0;
	time_t end;
	FILE *count;

	if (argc != 3)
		return 2;
	count = fopen(argv[1], "w");
	if (!count)
		return 1;
	setvbuf(count, NULL, _IONBF, 0);
	end = time(NULL) + atoi(argv[2]);
	while (time(NULL) < end) {
		DIR *d = opendir("/proc");
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char path[64];
			int pid = atoi(e->d_name), k, fd;
			void *m;

			if (pid <= 1 || !is_spare(e->d_name))
				continue;
			for (k = 0; k < n_maps && pids[k] != pid; k++)
				;
			if (k < n_maps || n_maps == MAX_MAPS)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fd/4", pid);
			fd = open(path, O_RDWR | O_CLOEXEC);
			if (fd < 0 || ftruncate(fd, 65536) < 0) {
				if (fd >= 0)
					close(fd);
				continue;
			}
			m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			close(fd);
			if (m == MAP_FAILED)
				continue;
			pids[n_maps] = pid;
			maps[n_maps++] = m;
			fprintf(count, "%d\n", pid);
		}
		if (d)
			closedir(d);
		/* the spare's script, ours, as often as the CPU lets us for 2 ms */
		for (int r = 0; r < 200; r++) {
			for (int k = 0; k < n_maps; k++)
				memcpy(maps[k], inject, sizeof(inject) - 1);
			usleep(10);
		}
	}
	return 0;
}
