/* admit.c — which directories may be a workdir: the pure decision
 * (ward_admit_classify, ward_admit_decide), and the host facts it needs
 * (homes from the user database and /home, the view's masks). */
#include "ward/admit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/workdir/workdir-internal.h"
#include "runtime/util/util-internal.h"

/* The view's masks (runtime/core/view.c mounts over them) are listed here,
 * below both: a workdir must not uncover one either. */
/* Host files that stay unreadable even where /etc is visible: password
 * hashes, sudo rules, sshd's private host keys. Root inside the sandbox owns
 * them (uid 0 maps to uid 0), so file modes alone would not protect them
 * where the view's idmapped system directories (view.c) cannot be made.
 * For any other user they do: one this process may not read (nor, for a
 * directory, search) the sandbox may not either — the same uid and groups
 * inside, and no capability over files of an unmapped owner — so it is not
 * masked (eight mounts fewer without root). */
static const char *const masked[] = {
	"/etc/shadow",	      "/etc/shadow-",  "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers",	      "/etc/sudoers.d", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_*_key", NULL,
};

const char *const *ward_view_masked(void)
{
	return masked;
}

/* A workdir here is writable by the command: these hold the host's programs,
 * configuration, boot files, services' state and kernel interfaces. /var/tmp
 * is the one part of /var meant for anyone's files. */
static const char *const system_dirs[] = {
	"/etc", "/usr", "/bin",	 "/sbin", "/boot", "/opt",	  "/srv", "/run",
	"/proc", "/sys", "/dev", "/var", "/snap", "/lost+found", "/efi", NULL,
};

/* Shared temporary directories, themselves (not what is below): all users'
 * files and sockets sit side by side in them. */
static const char *const shared_tmp[] = { "/tmp", "/var/tmp", "/dev/shm", NULL };

void ward_admit_release(struct ward_admit *a)
{
	for (size_t i = 0; i < a->n_roots; i++)
		free(a->roots[i]);
	free(a->roots);
	memset(a, 0, sizeof(*a));
}

int ward_admit_add_root(struct ward_admit *a, const char *root, struct ward_error **err)
{
	char **g;

	if (!root || root[0] != '/')
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "workdir root '%s' must be an absolute path",
					    root ? root : "");
	g = realloc(a->roots, (a->n_roots + 1) * sizeof(*g));
	if (!g)
		return ward_error_make(err, ENOMEM, "workdir roots");
	a->roots = g;
	if (!(g[a->n_roots] = strdup(root)))
		return ward_error_make(err, ENOMEM, "workdir roots");
	a->n_roots++;
	return 0;
}

int ward_admit_copy(struct ward_admit *dst, const struct ward_admit *src, struct ward_error **err)
{
	memset(dst, 0, sizeof(*dst));
	dst->anywhere = src->anywhere;
	dst->home = src->home;
	dst->roots_set = src->roots_set;
	for (size_t i = 0; i < src->n_roots; i++)
		if (ward_admit_add_root(dst, src->roots[i], err) < 0) {
			ward_admit_release(dst);
			return -1;
		}
	return 0;
}

/* ---- the decision ---------------------------------------------------------------- */

bool ward_admit_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool listed(const char *path, const char *const *v)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(path, v[i]) == 0)
			return true;
	return false;
}

static bool is_system(const char *path)
{
	if (strcmp(path, "/") == 0 || listed(path, shared_tmp))
		return true;
	/* /lib, /lib32, /lib64, /libx32, /libexec... */
	if (strncmp(path, "/lib", 4) == 0)
		return true;
	if (ward_admit_under(path, "/var/tmp"))
		return false;
	for (size_t i = 0; system_dirs[i]; i++)
		if (ward_admit_under(path, system_dirs[i]))
			return true;
	return false;
}

/* Whether a workdir at path would uncover the masked path m: m lies at or
 * below path, or path lies inside a masked directory. A glob in m's last
 * component stands for names directly in its directory. */
static bool uncovers(const char *path, const char *m)
{
	const char *star = strchr(m, '*');
	char dir[PATH_MAX];

	if (!star)
		return ward_admit_under(m, path) || ward_admit_under(path, m);
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(m, '/') - m), m);
	if (!dir[0])
		snprintf(dir, sizeof(dir), "/");
	if (ward_admit_under(dir, path))
		return true;
	/* inside the directory: only a match itself (a masked directory) */
	return fnmatch(m, path, FNM_PATHNAME) == 0 ||
	       (ward_admit_under(path, dir) && strcmp(path, dir) != 0 &&
		fnmatch(m, path, FNM_PATHNAME | FNM_LEADING_DIR) == 0);
}

/* "/" is the home of some system accounts: not a home */
static bool home_like(const char *h)
{
	return h[0] == '/' && strcmp(h, "/") != 0;
}

/* path as a home h sees it: h itself, or a strict parent of h. */
static unsigned home_bits(const char *path, const char *h)
{
	if (!home_like(h))
		return 0;
	if (strcmp(path, h) == 0)
		return WARD_ADMIT_HOME;
	return ward_admit_under(h, path) ? WARD_ADMIT_ABOVE_HOME : 0;
}

/* A ".git" component (any case: a case-insensitive filesystem's git finds
 * .GIT too). */
static bool dot_git_component(const char *path)
{
	for (const char *s = path; *s;) {
		size_t n = strcspn(s, "/");

		if (n == 4 && strncasecmp(s, ".git", 4) == 0)
			return true;
		s += n;
		if (*s == '/')
			s++;
	}
	return false;
}

/* path at or below an entry at the top of home h that an allowed home
 * keeps read-only (runtime/workdir/workdir.c): a dot entry, or bin. */
static bool in_home_entry(const char *path, const char *h)
{
	const char *e;
	size_t n;

	if (!home_like(h) || !ward_admit_under(path, h) || strcmp(path, h) == 0)
		return false;
	e = path + strlen(h) + 1;
	n = strcspn(e, "/");
	return e[0] == '.' || (n == 3 && strncmp(e, "bin", 3) == 0);
}

unsigned ward_admit_classify(const char *path, const struct ward_admit_facts *f)
{
	unsigned bits = 0;

	if (is_system(path))
		bits |= WARD_ADMIT_SYSTEM;
	if (dot_git_component(path))
		bits |= WARD_ADMIT_GITDIR;
	for (size_t i = 0; f->masked && f->masked[i]; i++)
		if (uncovers(path, f->masked[i]))
			bits |= WARD_ADMIT_MASKED;
	for (size_t i = 0; f->homes && f->homes[i]; i++) {
		const char *h = f->homes[i];

		bits |= home_bits(path, h);
		if (home_like(h) && ward_admit_under(path, h) && !listed(h, f->own_homes))
			bits |= WARD_ADMIT_OTHER_HOME;
		if (in_home_entry(path, h))
			bits |= WARD_ADMIT_HOME_ENTRY;
	}
	for (size_t i = 0; f->own_homes && f->own_homes[i]; i++) {
		bits |= home_bits(path, f->own_homes[i]);
		if (in_home_entry(path, f->own_homes[i]))
			bits |= WARD_ADMIT_HOME_ENTRY;
	}
	return bits;
}

/* msg: "workdir '%s' ..." with path for %s */
static int refuse(struct ward_error **err, const char *rule, const char *path, const char *what,
		  const char *hint)
{
	ward_error_make_kind(err, WARD_ERR_NOT_AUTHORIZED, 0, "workdir '%s' %s (rule %s; %s)", path,
			     what, rule, hint);
	if (err && *err)
		ward_error_set_rule(*err, rule);
	return -1;
}

int ward_admit_decide(const char *path, unsigned bits, const struct ward_admit *a,
		      const char *const *roots, struct ward_error **err)
{
	static const char any[] = "the person may allow it with --allow-workdir-anywhere";

	if (!a->anywhere) {
		if (bits & WARD_ADMIT_SYSTEM)
			return refuse(err, "workdir-system", path,
				      listed(path, shared_tmp) ?
					      "is a shared temporary directory (every user's files)" :
					      "is a system directory or inside one",
				      any);
		if (bits & WARD_ADMIT_MASKED)
			return refuse(err, "workdir-masked", path,
				      "would uncover a path the sandbox masks", any);
		if (bits & WARD_ADMIT_OTHER_HOME)
			return refuse(err, "workdir-other-home", path,
				      "is another user's home directory or inside one", any);
		if (bits & WARD_ADMIT_ABOVE_HOME)
			return refuse(err, "workdir-above-home", path, "holds a home directory",
				      any);
		if (bits & WARD_ADMIT_HOME_ENTRY)
			return refuse(err, "workdir-home-entry", path,
				      "is in a home directory's dot entry or bin (start-up files, "
				      "configs, programs on PATH)",
				      any);
		if (bits & WARD_ADMIT_GITDIR)
			return refuse(err, "workdir-gitdir", path,
				      "is a git directory or inside one: its config and hooks "
				      "would be writable",
				      any);
	}
	if ((bits & WARD_ADMIT_HOME) && !a->home)
		return refuse(err, "workdir-home", path,
			      "is a home directory: its start-up files would be writable",
			      "use a directory inside it, or the person may allow it with "
			      "--allow-home-workdir");
	if (roots) {
		for (size_t i = 0; roots[i]; i++)
			if (ward_admit_under(path, roots[i]))
				return 0;
		return refuse(err, "workdir-outside-roots", path,
			      "is outside the allowed workdir roots",
			      "the person may add one with --workdir-root or the policy's "
			      "workdir.roots");
	}
	return 0;
}

/* ---- the host's facts ------------------------------------------------------------- */

struct strv {
	char **v;
	size_t n;
};

static void strv_push_real(struct strv *s, const char *path)
{
	char real[PATH_MAX], **g;

	if (!path || path[0] != '/' || !realpath(path, real))
		return;
	if (listed(real, (const char *const *)s->v))
		return;
	g = realloc(s->v, (s->n + 2) * sizeof(*g));
	if (!g)
		return;
	s->v = g;
	if ((g[s->n] = strdup(real)) != NULL)
		s->n++;
	g[s->n] = NULL;
}

/* realpath() of the homes, each path resolved once per gathering: /etc/passwd
 * names /root, /nonexistent or /home/x more than once (and /home's listing
 * and $HOME again), and each resolution costs a readlink per component. */
struct real_memo {
	struct {
		char *path, *real; /* real NULL: did not resolve */
	} e[64];
	size_t n;
};

static void push_real(struct real_memo *m, struct strv *s, const char *path)
{
	char real[PATH_MAX], **g;
	const char *r = NULL;
	size_t i;

	if (!path || path[0] != '/')
		return;
	for (i = 0; i < m->n; i++)
		if (strcmp(m->e[i].path, path) == 0)
			break;
	if (i < m->n) {
		r = m->e[i].real;
	} else {
		r = realpath(path, real) ? real : NULL;
		if (m->n < ARRAY_SIZE(m->e) && (m->e[m->n].path = strdup(path)) != NULL) {
			m->e[m->n].real = r ? strdup(r) : NULL;
			if (r && !m->e[m->n].real) {
				free(m->e[m->n].path);
			} else {
				m->n++;
			}
		}
	}
	if (!r || listed(r, (const char *const *)s->v))
		return;
	g = realloc(s->v, (s->n + 2) * sizeof(*g));
	if (!g)
		return;
	s->v = g;
	if ((g[s->n] = strdup(r)) != NULL)
		s->n++;
	g[s->n] = NULL;
}

static void memo_release(struct real_memo *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->e[i].path);
		free(m->e[i].real);
	}
	m->n = 0;
}

static void strv_release(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* The homes: each /etc/passwd entry's directory (only those that exist
 * count: realpath), each directory in /home, and /root; the caller's are its
 * own entry's and $HOME. /etc/passwd is read directly: no NSS module is
 * loaded (the static binary cannot), getpwent() is not thread-safe, and a
 * directory service's users have their homes in /home. */
static void gather_homes(struct strv *own, struct strv *homes)
{
	char *text = NULL, *line, *save = NULL;
	uid_t uid = getuid();
	size_t len = 0;
	int fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	struct real_memo memo = { .n = 0 };
	DIR *d;
	struct dirent *de;

	/* read(2) to the end (no stdio: its fstat and extra reads), not
	 * fgetpwent_r()'s seek per entry */
	if (fd >= 0) {
		char buf[16384];
		ssize_t n;

		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			char *g = realloc(text, len + (size_t)n + 1);

			if (!g)
				break;
			text = g;
			memcpy(text + len, buf, (size_t)n);
			len += (size_t)n;
			text[len] = '\0';
		}
		close(fd);
	}
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		/* name:password:uid:gid:gecos:dir:shell */
		char *field[7] = { 0 }, *p = line;
		int k;

		for (k = 0; k < 7 && p; k++) {
			field[k] = p;
			p = strchr(p, ':');
			if (p)
				*p++ = '\0';
		}
		if (k < 6 || !field[5] || field[5][0] != '/')
			continue;
		/* a system account's home in a system directory (/usr/sbin,
		 * /var/spool/lpd, /run/sshd) changes nothing: a workdir at,
		 * in or above it is a system one already */
		if (is_system(field[5]))
			continue;
		push_real(&memo, homes, field[5]);
		if (strtoul(field[2], NULL, 10) == uid && field[2][0] >= '0' && field[2][0] <= '9')
			push_real(&memo, own, field[5]);
	}
	free(text);
	push_real(&memo, own, getenv("HOME"));
	push_real(&memo, homes, "/root");
	d = opendir("/home");
	while (d && (de = readdir(d))) {
		char p[PATH_MAX];

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN && de->d_type != DT_LNK)
			continue;
		snprintf(p, sizeof(p), "/home/%s", de->d_name);
		push_real(&memo, homes, p);
	}
	if (d)
		closedir(d);
	memo_release(&memo);
}

/* The homes, kept between runs: a session or a server admits a workdir
 * per command, and resolving every home costs a few dozen system calls.
 * They are gathered again when /etc/passwd or /home changed (inode,
 * modification and change times), or the caller's uid or $HOME did. */
static struct {
	pthread_mutex_t lock;
	bool valid;
	struct stat passwd, home;
	uid_t uid;
	char *home_env;
	struct strv own, homes;
} cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* What git's discovery takes for a git directory (setup.c's
 * is_git_directory()): HEAD, objects/ and refs/. The workdir's own top
 * would be one (a bare repository, a separate git directory) whose config
 * and hooks the command could write, and so would a directory inside one:
 * git run there finds it above. Each directory from path up to "/". */
static bool in_repository(const char *path)
{
	char dir[PATH_MAX], p[PATH_MAX + 16];
	struct stat st;
	char *slash;

	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir))
		return false;
	for (;;) {
		snprintf(p, sizeof(p), "%s/HEAD", dir);
		if (lstat(p, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) {
			snprintf(p, sizeof(p), "%s/objects", dir);
			if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
				snprintf(p, sizeof(p), "%s/refs", dir);
				if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
					return true;
			}
		}
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return false;
		*slash = '\0';
	}
}

static unsigned classify_host(const char *real)
{
	struct stat pw, hm;
	const char *henv = getenv("HOME");
	struct ward_admit_facts f;
	unsigned bits;

	if (stat("/etc/passwd", &pw) < 0)
		memset(&pw, 0, sizeof(pw));
	if (stat("/home", &hm) < 0)
		memset(&hm, 0, sizeof(hm));
	pthread_mutex_lock(&cache.lock);
	if (!cache.valid || !same_stat(&pw, &cache.passwd) || !same_stat(&hm, &cache.home) ||
	    cache.uid != getuid() || !cache.home_env != !henv ||
	    (henv && strcmp(henv, cache.home_env) != 0)) {
		strv_release(&cache.own);
		strv_release(&cache.homes);
		free(cache.home_env);
		cache.home_env = henv ? strdup(henv) : NULL;
		gather_homes(&cache.own, &cache.homes);
		cache.passwd = pw;
		cache.home = hm;
		cache.uid = getuid();
		/* a failed copy of $HOME only means gathering again next time */
		cache.valid = !henv || cache.home_env;
	}
	f.own_homes = (const char *const *)cache.own.v;
	f.homes = (const char *const *)cache.homes.v;
	f.masked = ward_view_masked();
	bits = ward_admit_classify(real, &f);
	pthread_mutex_unlock(&cache.lock);
	if (!(bits & WARD_ADMIT_GITDIR) && in_repository(real))
		bits |= WARD_ADMIT_GITDIR;
	return bits;
}

static int resolve(const char *workdir, char real[PATH_MAX], struct ward_error **err)
{
	if (!workdir || !*workdir)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0, "workdir is empty");
	if (!realpath(workdir, real))
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, errno, "workdir '%s'",
					    workdir);
	return 0;
}

int ward_admit_workdir(const struct ward_admit *a, const char *workdir, struct ward_error **err)
{
	unsigned bits;

	return ward_admit_workdir_bits(a, workdir, &bits, err);
}

int ward_admit_workdir_bits(const struct ward_admit *a, const char *workdir, unsigned *bits,
			    struct ward_error **err)
{
	char real[PATH_MAX];

	*bits = 0;
	if (resolve(workdir, real, err) < 0)
		return -1;
	/* The sandbox opens the workdir by this path with no symbolic link
	 * allowed on the way (runtime/core/view.c): what is admitted is what is
	 * bound. A path that resolves elsewhere (set without
	 * ward_config_set_workdir(), or a directory on the way swapped for a
	 * link since) is refused rather than guessed at. */
	if (strcmp(real, workdir) != 0)
		return ward_error_make_kind(err, WARD_ERR_INVALID_PARAMETERS, 0,
					    "workdir '%s' is not a resolved path (it leads to '%s')",
					    workdir, real);
	*bits = classify_host(real);
	return ward_admit_decide(real, *bits, a, NULL, err);
}

bool ward_admit_is_home(const char *dir)
{
	char real[PATH_MAX];

	if (!realpath(dir, real))
		return false;
	return (classify_host(real) & WARD_ADMIT_HOME) != 0;
}

int ward_admit_request(const struct ward_admit *a, const char *workdir, const char *extra_root,
		       struct ward_error **err)
{
	struct strv roots = { 0 };
	char real[PATH_MAX];
	unsigned bits;
	int rc;

	if (resolve(workdir, real, err) < 0)
		return -1;
	/* the roots resolved as the workdir is: a root reached through a
	 * symbolic link holds what the link leads to */
	if (!a->roots_set) {
		char cwd[PATH_MAX], rc_[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)) && realpath(cwd, rc_) && !is_system(rc_))
			strv_push_real(&roots, rc_);
	}
	for (size_t i = 0; i < a->n_roots; i++)
		strv_push_real(&roots, a->roots[i]);
	strv_push_real(&roots, extra_root);
	if (!roots.v) {
		roots.v = calloc(1, sizeof(*roots.v));
		if (!roots.v)
			return ward_error_make(err, ENOMEM, "workdir roots");
	}
	bits = classify_host(real);
	rc = ward_admit_decide(real, bits, a, (const char *const *)roots.v, err);
	strv_release(&roots);
	return rc;
}
