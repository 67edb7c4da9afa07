/* env.c — environment scrubbing; see ward/env.h. */
#include "ward/env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const safe_names[] = {
	"PATH",	 "HOME",      "USER",	     "LOGNAME",	  "SHELL",  "TERM",   "COLORTERM",
	"LANG",	 "PWD",	      "TMPDIR",	     "CARGO_HOME", "RUSTUP_HOME", "NODE_PATH",
	"EDITOR", "VISUAL",   "LANGUAGE",
};

/* Prefixes of families of safe names. */
static const char *const safe_prefixes[] = { "LC_", "XDG_" };

bool ward_env_is_safe(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(safe_names) / sizeof(safe_names[0]); i++)
		if (strlen(safe_names[i]) == len && memcmp(safe_names[i], name, len) == 0)
			return true;
	for (i = 0; i < sizeof(safe_prefixes) / sizeof(safe_prefixes[0]); i++) {
		size_t n = strlen(safe_prefixes[i]);

		if (len > n && memcmp(safe_prefixes[i], name, n) == 0)
			return true;
	}
	return false;
}

const char *ward_env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

void ward_env_free(char **env)
{
	char **p;

	for (p = env; p && *p; p++)
		free(*p);
	free(env);
}

struct builder {
	char **v;
	size_t n, cap;
};

/* Put "K=V" in, replacing an entry of the same name. Takes ownership of kv. */
static int put(struct builder *b, char *kv)
{
	size_t klen = strcspn(kv, "="), i;

	for (i = 0; i < b->n; i++)
		if (strncmp(b->v[i], kv, klen) == 0 && b->v[i][klen] == '=') {
			free(b->v[i]);
			b->v[i] = kv;
			return 0;
		}
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char **v = realloc(b->v, cap * sizeof(*v));

		if (!v) {
			free(kv);
			return -1;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = kv;
	b->v[b->n] = NULL;
	return 0;
}

static int put_pair(struct builder *b, const char *k, const char *v)
{
	char *kv;

	if (asprintf(&kv, "%s=%s", k, v) < 0)
		return -1;
	return put(b, kv);
}

char **ward_env_build(char *const *host, bool clear, const char *workdir, char *const *set,
		      size_t n_set, struct ward_error **err)
{
	struct builder b = { 0 };
	size_t i;

	if (put_pair(&b, "PATH", WARD_DEFAULT_PATH) < 0) /* replaced by the host's below */
		goto oom;
	for (; !clear && host && *host; host++) {
		const char *eq = strchr(*host, '=');
		char *kv;

		if (!eq || !ward_env_is_safe(*host, (size_t)(eq - *host)))
			continue;
		kv = strdup(*host);
		if (!kv || put(&b, kv) < 0)
			goto oom;
	}
	if (workdir && put_pair(&b, "PWD", workdir) < 0)
		goto oom;
	for (i = 0; i < n_set; i++) {
		char *kv = strdup(set[i]);

		if (!kv || put(&b, kv) < 0)
			goto oom;
	}
	return b.v;
oom:
	ward_env_free(b.v);
	ward_error_make(err, ENOMEM, "build environment");
	return NULL;
}
