/* statedir.c — which directory holds ward's state, chosen so that another
 * local user can neither squat it (make ward fail, or read its change sets)
 * nor point ward's writes elsewhere (util-internal.h lists the order). */
#include "runtime/util/util-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#define LABEL "state directory"

static void skip(struct ward_state_choice *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A line of c->skipped: a candidate passed over, and why. */
static void skip(struct ward_state_choice *c, const char *fmt, ...)
{
	char line[WARD_ERROR_MESSAGE_MAX + 64];
	size_t had = c->skipped ? strlen(c->skipped) : 0, n;
	va_list ap;
	char *g;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	g = realloc(c->skipped, had + n + 2);
	if (!g)
		return;
	memcpy(g + had, line, n);
	g[had + n] = '\n';
	g[had + n + 1] = '\0';
	c->skipped = g;
}

/* One candidate: base must exist, sub is made below it with create. true
 * when it is usable (c filled). */
static bool try(struct ward_state_choice *c, const char *source, const char *base, const char *sub,
		bool create, struct ward_error **fail)
{
	struct ward_error *e = NULL;
	int fd = ward_hostpath_open_dir(LABEL, base, sub, create, true, &e);

	if (fd == -1) {
		skip(c, "%s", e ? e->message : "unusable");
		if (fail) {
			ward_error_free(*fail);
			*fail = e;
		} else {
			ward_error_free(e);
		}
		return false;
	}
	if (asprintf(&c->path, "%s%s%s", base, sub && base[strlen(base) - 1] != '/' ? "/" : "",
		     sub ? sub : "") < 0) {
		c->path = NULL;
		if (fd >= 0)
			close(fd);
		return false;
	}
	c->fd = fd; /* WARD_HOSTPATH_ABSENT: could be made, not made */
	if (c->fd < 0)
		c->fd = -1;
	c->source = source;
	return true;
}

/* /tmp/ward-UID is another user's: the first private directory of ours
 * named /tmp/ward-UID.XXXXXX (no one else can make one owned by us), else a
 * new one. */
static bool try_tmp_private(struct ward_state_choice *c, uid_t uid, bool create)
{
	char prefix[32], best[NAME_MAX + 1] = "", tmpl[64];
	size_t plen;
	DIR *d;
	struct dirent *e;

	plen = (size_t)snprintf(prefix, sizeof(prefix), "ward-%u.", (unsigned)uid);
	d = opendir("/tmp");
	while (d && (e = readdir(d)) != NULL) {
		struct stat st;

		if (strncmp(e->d_name, prefix, plen) != 0 || strlen(e->d_name) != plen + 6 ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077))
			continue;
		if (!*best || strcmp(e->d_name, best) < 0)
			snprintf(best, sizeof(best), "%s", e->d_name);
	}
	if (d)
		closedir(d);
	if (*best)
		return try(c, "/tmp", "/tmp", best, false, NULL);
	snprintf(tmpl, sizeof(tmpl), "/tmp/%sXXXXXX", prefix);
	if (!create) {
		/* doctor's answer: made on first use */
		c->path = strdup(tmpl);
		c->source = "/tmp";
		return c->path != NULL;
	}
	if (!mkdtemp(tmpl)) {
		skip(c, LABEL " '%s': %s", tmpl, strerror(errno));
		return false;
	}
	return try(c, "/tmp", "/tmp", tmpl + 5, false, NULL);
}

/* The last choice that found its directory, per process: checking the way
 * once holds for as long as ward uses it (util-internal.h), and one ward
 * command asks several times (rate limit, run record, protected paths).
 * Keyed by what the choice depends on. No descriptor is kept (a library
 * must not hold one behind its caller's back): the directory is opened
 * again without following a link, and must be the one chosen (st_dev,
 * st_ino), still there and still the caller's alone; else the choice is
 * made again. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static char *cache_key, *cache_path, *cache_skipped;
static const char *cache_source;
static dev_t cache_dev;
static ino_t cache_ino;

static char *key_of(const char *configured)
{
	const char *v[] = { configured, getenv("XDG_STATE_HOME"), getenv("HOME"),
			    getenv("XDG_RUNTIME_DIR") };
	char *k = NULL;

	if (asprintf(&k, "%u\x1f%s\x1f%s\x1f%s\x1f%s", (unsigned)geteuid(), v[0] ? v[0] : "\x1e",
		     v[1] ? v[1] : "\x1e", v[2] ? v[2] : "\x1e", v[3] ? v[3] : "\x1e") < 0)
		return NULL;
	return k;
}

static bool from_cache(const char *key, struct ward_state_choice *c)
{
	struct stat st;
	char why[96];
	bool hit = false;

	pthread_mutex_lock(&cache_lock);
	if (key && cache_key && strcmp(key, cache_key) == 0) {
		c->fd = open(cache_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (c->fd >= 0 && fstat(c->fd, &st) == 0 && st.st_dev == cache_dev &&
		    st.st_ino == cache_ino && st.st_nlink > 0 &&
		    !ward_hostpath_judge(WARD_HOSTPATH_PRIVATE_DIR, &st, geteuid(), why,
					 sizeof(why))) {
			c->path = strdup(cache_path);
			c->skipped = cache_skipped ? strdup(cache_skipped) : NULL;
			c->source = cache_source;
			hit = c->path && (!cache_skipped || c->skipped);
		}
		if (!hit)
			ward_state_choice_release(c);
	}
	pthread_mutex_unlock(&cache_lock);
	return hit;
}

static void to_cache(char *key, const struct ward_state_choice *c)
{
	struct stat st;

	if (!key || c->fd < 0 || fstat(c->fd, &st) < 0) {
		free(key);
		return;
	}
	pthread_mutex_lock(&cache_lock);
	free(cache_key);
	free(cache_path);
	free(cache_skipped);
	cache_key = key;
	cache_path = strdup(c->path);
	cache_skipped = c->skipped ? strdup(c->skipped) : NULL;
	cache_source = c->source;
	cache_dev = st.st_dev;
	cache_ino = st.st_ino;
	if (!cache_path) {
		free(cache_key);
		cache_key = NULL;
	}
	pthread_mutex_unlock(&cache_lock);
}

static int choose(const char *configured, bool create, struct ward_state_choice *c,
		  struct ward_error **err);

int ward_state_choose(const char *configured, bool create, struct ward_state_choice *c,
		      struct ward_error **err)
{
	char *key = key_of(configured);

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (from_cache(key, c)) {
		free(key);
		return 0;
	}
	if (choose(configured, create, c, err) < 0) {
		free(key);
		return -1;
	}
	to_cache(key, c);
	return 0;
}

static int choose(const char *configured, bool create, struct ward_state_choice *c,
		  struct ward_error **err)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME"),
		   *run = getenv("XDG_RUNTIME_DIR");
	uid_t uid = geteuid();
	char name[32];

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (configured) {
		struct ward_error *e = NULL;

		if (try(c, "configured", configured, NULL, false, &e))
			return 0;
		/* made when missing, as mkdir -p would, below what exists */
		if (e && e->code == ENOENT && configured[0] == '/') {
			ward_error_free(e);
			e = NULL;
			free(c->skipped);
			c->skipped = NULL;
			if (try(c, "configured", "/", configured + 1, create, &e))
				return 0;
		}
		if (err) {
			ward_error_free(*err);
			*err = e;
		} else {
			ward_error_free(e);
		}
		return -1;
	}
	if (xdg && xdg[0] == '/') {
		_cleanup_free_ char *sub = NULL;

		/* XDG: made, with its parents, when missing */
		if (asprintf(&sub, "%s/ward", xdg + 1) >= 0 &&
		    try(c, "XDG_STATE_HOME", "/", sub, create, NULL))
			return 0;
	} else if (xdg && *xdg) {
		skip(c, "XDG_STATE_HOME '%s' is not an absolute path (ignored)", xdg);
	}
	if (home && home[0] == '/' && try(c, "HOME", home, ".local/state/ward", create, NULL))
		return 0;
	if (run && run[0] == '/' && try(c, "XDG_RUNTIME_DIR", run, "ward", create, NULL))
		return 0;
	snprintf(name, sizeof(name), "ward-%u", (unsigned)uid);
	if (try(c, "/tmp", "/tmp", name, create, NULL) || try_tmp_private(c, uid, create))
		return 0;
	ward_error_make(err, EPERM, "no usable state directory (set XDG_STATE_HOME to a directory "
				    "of yours that no other user can write): %s",
			c->skipped ? c->skipped : "");
	return -1;
}

void ward_state_choice_release(struct ward_state_choice *c)
{
	free(c->path);
	free(c->skipped);
	if (c->fd >= 0)
		close(c->fd);
	c->path = c->skipped = NULL;
	c->fd = -1;
}

int ward_state_subdir(int state_fd, const char *state, const char *name, bool create,
		      struct ward_error **err)
{
	char why[96];
	struct stat st;
	_cleanup_close_ int fd = openat(state_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
							  O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(state_fd, name, 0700) < 0 && errno != EEXIST)
			return ward_error_make(err, errno, "mkdir '%s/%s'", state, name);
		fd = openat(state_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR))
		return ward_error_make(err, errno, LABEL " '%s': '%s' is not a directory (a symbolic "
						   "link is not followed)",
				       state, name);
	if (fd < 0)
		return ward_error_make(err, errno, LABEL " '%s': '%s'", state, name);
	if (fstat(fd, &st) < 0)
		return ward_error_make(err, errno, LABEL " '%s': '%s'", state, name);
	if (ward_hostpath_judge(WARD_HOSTPATH_PRIVATE_DIR, &st, geteuid(), why, sizeof(why))) {
		ward_error_make(err, 0, LABEL " '%s': '%s' %s", state, name, why);
		if (err && *err)
			(*err)->code = EPERM;
		return -1;
	}
	return steal_fd(&fd);
}

char *ward_state_dir_for(const char *configured, struct ward_error **err)
{
	struct ward_state_choice c;
	char *p = NULL;

	if (ward_state_choose(configured, true, &c, err) == 0)
		p = steal_ptr(c.path);
	ward_state_choice_release(&c);
	return p;
}

char *ward_changes_dir_checked(const char *configured, const char *name, struct ward_error **err)
{
	struct ward_state_choice c;
	int changes = -1, set = -1;
	char *state = NULL;

	/* the set is read from, and its upper given to overlayfs: changes/
	 * and changes/NAME must be ours alone as the state directory is */
	if (ward_state_choose(configured, true, &c, err) == 0 &&
	    (changes = ward_state_subdir(c.fd, c.path, "changes", false, err)) >= 0 &&
	    (set = ward_state_subdir(changes, c.path, name, false, err)) >= 0)
		state = steal_ptr(c.path);
	else if (err && *err && (*err)->code == ENOENT)
		/* no such set */
		ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, ENOENT, "change set '%s'",
				     name);
	if (set >= 0)
		close(set);
	if (changes >= 0)
		close(changes);
	ward_state_choice_release(&c);
	return state;
}
