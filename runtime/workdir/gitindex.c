/* gitindex.c — the gitlinks of a git index (workdir-internal.h says why).
 * Format: git's Documentation/gitformat-index.txt. */
#include "runtime/workdir/workdir-internal.h"
#include "runtime/util/util-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define INDEX_MAX (1024L * 1024 * 1024)
#define GITLINK 0xe /* the object type in an entry's mode: 0160000 >> 12 */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool ward_gitlinks_has(const struct ward_gitlinks *g, const char *path)
{
	return g->n && bsearch(&path, g->paths, g->n, sizeof(*g->paths), cmp_str);
}

void ward_gitlinks_release(struct ward_gitlinks *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->paths[i]);
	free(g->paths);
	free(g->unsafe);
	*g = (struct ward_gitlinks){ 0 };
}

/* What git's verify_path() refuses to add, and checks nowhere else: a
 * checkout from the index (`git restore .`, `git checkout -- .`,
 * `git checkout-index -a`) writes an entry's blob at its path as it is. An
 * empty name is a split index's replacement of a shared entry, named
 * there; a sparse index's directory entry (mode 040000) ends in '/'. */
static bool unsafe_path(const char *path, size_t len, uint32_t mode)
{
	const char *s = path, *end = path + len;

	if (!len)
		return false;
	if ((mode >> 12) == 04 && len > 1 && path[len - 1] == '/')
		end--;
	if (memchr(path, '\0', len))
		return true;
	for (;;) {
		const char *slash = memchr(s, '/', (size_t)(end - s));
		size_t n = (size_t)((slash ? slash : end) - s);

		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && !memcmp(s, "..", 2)) ||
		    (n == 4 && !strncasecmp(s, ".git", 4)))
			return true;
		if (!slash)
			return false;
		s = slash + 1;
	}
}

static int note_unsafe(struct ward_gitlinks *g, const char *path, size_t len, uint32_t mode)
{
	if (g->unsafe || !unsafe_path(path, len, mode))
		return 0;
	return (g->unsafe = strndup(path, len)) ? 0 : -1;
}

static int add(struct ward_gitlinks *g, const char *path, size_t len)
{
	char **v, *s;

	if (len == 0) {
		g->unnamed = true;
		return 0;
	}
	if (!(s = strndup(path, len)))
		return -1;
	if (ward_gitlinks_has(g, s)) {
		free(s);
		return 0;
	}
	if (!(v = realloc(g->paths, (g->n + 1) * sizeof(*v)))) {
		free(s);
		return -1;
	}
	g->paths = v;
	v[g->n++] = s;
	qsort(v, g->n, sizeof(*v), cmp_str);
	return 0;
}

/* git's varint (varint.c): 7 bits a byte, high bit "more", each
 * continuation adding one. */
static int varint(const unsigned char **p, const unsigned char *end, size_t *out)
{
	size_t v;
	unsigned char c;

	if (*p >= end)
		return -1;
	c = *(*p)++;
	v = c & 127;
	while (c & 128) {
		if (*p >= end || v > (SIZE_MAX >> 8))
			return -1;
		c = *(*p)++;
		v = ((v + 1) << 7) | (c & 127);
	}
	*out = v;
	return 0;
}

/* One reading of the index with object names of hashsz bytes: 0 when the
 * entries and the extensions end exactly at the trailing checksum, with the
 * gitlinks in *g. */
static int walk(const unsigned char *buf, size_t len, size_t hashsz, struct ward_gitlinks *g)
{
	uint32_t version = be32(buf + 4), count = be32(buf + 8);
	const unsigned char *p = buf + 12, *end = buf + len - hashsz;
	char *name = NULL;
	size_t name_len = 0;
	int rc = -1;

	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *e = p;
		size_t fixed = 40 + hashsz + 2, len_s, drop;
		uint16_t flags;
		uint32_t mode;

		if ((size_t)(end - p) < fixed)
			goto out;
		mode = be32(e + 24);
		flags = (uint16_t)(e[40 + hashsz] << 8 | e[41 + hashsz]);
		if (flags & 0x4000) {
			if (version < 3)
				goto out;
			fixed += 2;
			if ((size_t)(end - p) < fixed)
				goto out;
		}
		p = e + fixed;
		if (version == 4) {
			const unsigned char *nul;
			char *grown;

			if (varint(&p, end, &drop) < 0 || drop > name_len ||
			    !(nul = memchr(p, 0, (size_t)(end - p))))
				goto out;
			len_s = (size_t)(nul - p);
			if (!(grown = realloc(name, name_len - drop + len_s + 1)))
				goto out;
			name = grown;
			memcpy(name + name_len - drop, p, len_s);
			name_len = name_len - drop + len_s;
			name[name_len] = '\0';
			p = nul + 1;
			if ((mode >> 12) == GITLINK && add(g, name, name_len) < 0)
				goto out;
			if (note_unsafe(g, name, name_len, mode) < 0)
				goto out;
		} else {
			const unsigned char *nul = memchr(p, 0, (size_t)(end - p));
			size_t size;

			if (!nul)
				goto out;
			len_s = (size_t)(nul - p);
			/* 1 to 8 NULs pad the entry to a multiple of 8 */
			size = (fixed + len_s + 8) & ~(size_t)7;
			if ((size_t)(end - e) < size)
				goto out;
			if ((mode >> 12) == GITLINK && add(g, (const char *)p, len_s) < 0)
				goto out;
			if (note_unsafe(g, (const char *)p, len_s, mode) < 0)
				goto out;
			p = e + size;
		}
	}
	/* extensions: a 4-byte signature, a 32-bit size, the data */
	while (p < end) {
		uint32_t size;

		if ((size_t)(end - p) < 8)
			goto out;
		size = be32(p + 4);
		if ((size_t)(end - p) - 8 < size)
			goto out;
		p += 8 + size;
	}
	rc = p == end ? 0 : -1;
out:
	free(name);
	return rc;
}

int ward_gitindex_parse(const unsigned char *buf, size_t len, struct ward_gitlinks *out)
{
	/* SHA-1 and SHA-256 object names: which one the repository uses is in
	 * its config, not in the index. Both readings are tried, and the
	 * gitlinks of every one that holds together are kept: whichever git
	 * takes, what it would find is judged. */
	static const size_t hashes[] = { 20, 32 };
	bool parsed = false;
	uint32_t version;

	if (len < 12 + 20 || memcmp(buf, "DIRC", 4) != 0)
		goto bad;
	version = be32(buf + 4);
	if (version < 2 || version > 4)
		goto bad;
	for (size_t h = 0; h < sizeof(hashes) / sizeof(*hashes); h++) {
		struct ward_gitlinks g = { 0 };
		int rc = 0;

		if (len < 12 + hashes[h])
			continue;
		errno = 0;
		if (walk(buf, len, hashes[h], &g) < 0) {
			ward_gitlinks_release(&g);
			if (errno == ENOMEM)
				return -1;
			continue;
		}
		parsed = true;
		for (size_t i = 0; i < g.n && rc == 0; i++)
			rc = add(out, g.paths[i], strlen(g.paths[i]));
		out->unnamed |= g.unnamed;
		if (!out->unsafe && g.unsafe) {
			out->unsafe = g.unsafe;
			g.unsafe = NULL;
		}
		ward_gitlinks_release(&g);
		if (rc < 0)
			return -1;
	}
	if (parsed)
		return 0;
bad:
	errno = EINVAL;
	return -1;
}

static bool is_index_name(const char *s, size_t n)
{
	return (n == 5 && !memcmp(s, "index", 5)) || (n > 12 && !memcmp(s, "sharedindex.", 12));
}

/* Names of git's data directories: a path through one may be data. */
static bool data_dir(const char *s, size_t n)
{
	static const char *const names[] = { "objects", "refs", "logs", "rebase-merge",
					     "rebase-apply", "sequencer", "rr-cache", "reftable" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strlen(names[i]) == n && !memcmp(s, names[i], n))
			return true;
	return false;
}

enum ward_gitindex_kind ward_gitindex_kind(const char *rel)
{
	const char *base = strrchr(rel, '/'), *c;
	size_t n, comps = 0;
	bool modules, worktrees, through_data = false;

	base = base ? base + 1 : rel;
	if (!is_index_name(base, strlen(base)))
		return WARD_GITINDEX_NONE;
	if (base == rel)
		return WARD_GITINDEX_SURE;
	modules = !strncmp(rel, "modules/", 8);
	worktrees = !strncmp(rel, "worktrees/", 10);
	for (c = rel; c < base; c += n + 1) {
		n = strcspn(c, "/");
		comps++;
		if (comps > 2 && data_dir(c, n))
			through_data = true;
	}
	if (worktrees && comps == 2)
		return WARD_GITINDEX_SURE;
	if (modules && comps >= 2 && !through_data)
		return WARD_GITINDEX_SURE;
	return WARD_GITINDEX_MAYBE;
}

/* Open base/rel for reading, no link followed anywhere below base. */
static int open_beneath(const char *base, const char *rel)
{
	int dir, fd, saved;

	dir = open(base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return -1;
	fd = ward_open_nofollow(dir, rel, O_RDONLY | O_NONBLOCK, true);
	saved = errno;
	close(dir);
	errno = saved;
	return fd;
}

/* Add the gitlinks of base/rel to *g. ENOENT when there is none. */
static int read_index(const char *base, const char *rel, struct ward_gitlinks *g)
{
	unsigned char *buf;
	struct stat st;
	size_t got = 0;
	int fd, rc;

	if ((fd = open_beneath(base, rel)) < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > INDEX_MAX ||
	    !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	while (got <= (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size + 1 - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		free(buf);
		errno = EINVAL;
		return -1;
	}
	rc = ward_gitindex_parse(buf, got, g);
	free(buf);
	return rc;
}

/* What the git directory holding rel had before: its index and every
 * shared index beside it. */
static int old_gitlinks(const char *lower, const char *rel, struct ward_gitlinks *g)
{
	char dir[4096], path[4096];
	const char *slash = strrchr(rel, '/');
	struct dirent *d;
	DIR *dp;
	int fd;

	if (snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - rel) : 0, rel) < 0 ||
	    (size_t)snprintf(path, sizeof(path), "%s%sindex", dir, *dir ? "/" : "") >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (read_index(lower, path, g) < 0 && errno != ENOENT)
		return -1;
	if ((fd = open_beneath(lower, *dir ? dir : ".")) < 0)
		return errno == ENOENT ? 0 : -1;
	/* O_NONBLOCK|O_RDONLY of a directory: a directory stream */
	if (!(dp = fdopendir(fd))) {
		close(fd);
		return -1;
	}
	while ((d = readdir(dp))) {
		if (strncmp(d->d_name, "sharedindex.", 12) != 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", d->d_name) >=
			    sizeof(path) ||
		    read_index(lower, path, g) < 0) {
			closedir(dp);
			return -1;
		}
	}
	closedir(dp);
	return 0;
}

bool ward_gitindex_refused(const char *upper, const char *lower, const char *rel,
			   enum ward_gitindex_kind kind, char *which, size_t n)
{
	struct ward_gitlinks now = { 0 }, before = { 0 };
	bool refused = true;

	if (n)
		which[0] = '\0';
	if (kind == WARD_GITINDEX_NONE)
		return false;
	if (read_index(upper, rel, &now) < 0) {
		/* a path that may be data, and is no index: data */
		refused = kind == WARD_GITINDEX_SURE || errno == ENOMEM;
		goto out;
	}
	if (old_gitlinks(lower, rel, &before) < 0)
		goto out;
	/* a split index's entries that replace shared ones have no name */
	if (now.unnamed)
		goto out;
	/* not a gitlink: the index itself is what is reported */
	if (now.unsafe)
		goto out;
	refused = false;
	for (size_t i = 0; i < now.n && !refused; i++)
		if (!ward_gitlinks_has(&before, now.paths[i])) {
			refused = true;
			if (n)
				snprintf(which, n, "%s", now.paths[i]);
		}
out:
	ward_gitlinks_release(&now);
	ward_gitlinks_release(&before);
	return refused;
}

bool ward_gitindex_workdir_refused(const char *upper, const char *workdir, const char *rel)
{
	char up[4096], low[4096];
	const char *c = rel, *in;
	size_t n;

	/* the first ".git" component: the git directory the entry is in */
	for (;; c += n + 1) {
		n = strcspn(c, "/");
		if (c[n] != '/')
			return false;
		if (n == 4 && !strncasecmp(c, ".git", 4))
			break;
	}
	in = c + n + 1;
	if ((size_t)snprintf(up, sizeof(up), "%s/%.*s", upper, (int)(in - 1 - rel), rel) >=
		    sizeof(up) ||
	    (size_t)snprintf(low, sizeof(low), "%s/%.*s", workdir, (int)(in - 1 - rel), rel) >=
		    sizeof(low))
		return ward_gitindex_kind(in) != WARD_GITINDEX_NONE;
	return ward_gitindex_refused(up, low, in, ward_gitindex_kind(in), NULL, 0);
}
