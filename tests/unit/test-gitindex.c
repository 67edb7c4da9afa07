/* test-gitindex.c — the gitlinks (submodule entries) of a git index, read
 * from indexes built here byte by byte: versions 2, 3 and 4, SHA-1 and
 * SHA-256, and malformed ones refused. Pure. */
#include "harness.h"
#include "runtime/workdir/workdir-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ix {
	unsigned char b[4096];
	size_t n;
	unsigned version, hashsz;
	char prev[256];
};

static void put32(struct ix *x, uint32_t v)
{
	x->b[x->n++] = (unsigned char)(v >> 24);
	x->b[x->n++] = (unsigned char)(v >> 16);
	x->b[x->n++] = (unsigned char)(v >> 8);
	x->b[x->n++] = (unsigned char)v;
}

static void start(struct ix *x, unsigned version, unsigned hashsz, uint32_t count)
{
	memset(x, 0, sizeof(*x));
	x->version = version;
	x->hashsz = hashsz;
	memcpy(x->b, "DIRC", 4);
	x->n = 4;
	put32(x, version);
	put32(x, count);
}

/* One entry of the given mode (0100644 a file, 0160000 a gitlink). */
static void entry(struct ix *x, uint32_t mode, const char *name, bool extended)
{
	size_t e = x->n, len = strlen(name);

	memset(x->b + x->n, 0, 24);
	x->n += 24;
	put32(x, mode);
	memset(x->b + x->n, 0, 12 + x->hashsz);
	x->n += 12 + x->hashsz;
	x->b[x->n++] = (unsigned char)((extended ? 0x40 : 0) | (len >= 0xfff ? 0xf : len >> 8));
	x->b[x->n++] = (unsigned char)(len >= 0xfff ? 0xff : len & 0xff);
	if (extended) {
		x->b[x->n++] = 0;
		x->b[x->n++] = 0;
	}
	if (x->version == 4) {
		size_t common = 0, plen = strlen(x->prev);

		while (common < plen && common < len && x->prev[common] == name[common])
			common++;
		x->b[x->n++] = (unsigned char)(plen - common); /* < 128: one byte */
		memcpy(x->b + x->n, name + common, len - common + 1);
		x->n += len - common + 1;
		snprintf(x->prev, sizeof(x->prev), "%s", name);
	} else {
		size_t size = (x->n - e + len + 8) & ~(size_t)7;

		memcpy(x->b + x->n, name, len);
		memset(x->b + x->n + len, 0, size - (x->n - e) - len);
		x->n = e + size;
	}
}

static void extension(struct ix *x, const char *sig, uint32_t size)
{
	memcpy(x->b + x->n, sig, 4);
	x->n += 4;
	put32(x, size);
	memset(x->b + x->n, 'e', size);
	x->n += size;
}

static void finish(struct ix *x)
{
	memset(x->b + x->n, 0x5a, x->hashsz); /* the checksum: not verified */
	x->n += x->hashsz;
}

static void parse_ok(struct ix *x, size_t want, const char *first)
{
	struct ward_gitlinks g = { 0 };

	ck_assert_int_eq(ward_gitindex_parse(x->b, x->n, &g), 0);
	ck_assert_uint_eq(g.n, want);
	if (first)
		ck_assert_str_eq(g.paths[0], first);
	ward_gitlinks_release(&g);
}

START_TEST(test_versions)
{
	static const unsigned hashes[] = { 20, 32 };
	struct ix x;

	for (size_t h = 0; h < 2; h++) {
		for (unsigned v = 2; v <= 4; v++) {
			start(&x, v, hashes[h], 4);
			entry(&x, 0100644, "a.txt", false);
			entry(&x, 0160000, "lib/dep", v == 3);
			entry(&x, 0100755, "lib/dep2/run", false);
			entry(&x, 0160000, "sub", false);
			extension(&x, "TREE", 13);
			finish(&x);
			{
				struct ward_gitlinks g = { 0 };

				ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
				ck_assert_uint_eq(g.n, 2);
				ck_assert(ward_gitlinks_has(&g, "lib/dep"));
				ck_assert(ward_gitlinks_has(&g, "sub"));
				ck_assert(!ward_gitlinks_has(&g, "a.txt"));
				ck_assert(!ward_gitlinks_has(&g, "lib"));
				ward_gitlinks_release(&g);
			}
		}
	}
	start(&x, 2, 20, 0);
	finish(&x);
	parse_ok(&x, 0, NULL);
	start(&x, 2, 20, 1);
	entry(&x, 0100644, "x", false);
	finish(&x);
	parse_ok(&x, 0, NULL);
}
END_TEST

/* The union of several indexes (an index and its shared ones), sorted. */
START_TEST(test_union)
{
	struct ward_gitlinks g = { 0 };
	struct ix x;

	start(&x, 2, 20, 2);
	entry(&x, 0160000, "zeta", false);
	entry(&x, 0160000, "alpha", false);
	finish(&x);
	ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
	start(&x, 4, 20, 2);
	entry(&x, 0160000, "alpha", false);
	entry(&x, 0160000, "mid", false);
	finish(&x);
	ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
	ck_assert_uint_eq(g.n, 3);
	ck_assert_str_eq(g.paths[0], "alpha");
	ck_assert_str_eq(g.paths[1], "mid");
	ck_assert_str_eq(g.paths[2], "zeta");
	ck_assert(!g.unnamed);
	ward_gitlinks_release(&g);

	/* a split index's replacement entry: no name, cannot be judged */
	start(&x, 2, 20, 1);
	entry(&x, 0160000, "", false);
	extension(&x, "link", 20);
	finish(&x);
	ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
	ck_assert(g.unnamed);
	ward_gitlinks_release(&g);
}
END_TEST

/* Entries whose path git would refuse to add: a checkout from the index
 * writes them as they are. */
START_TEST(test_unsafe_paths)
{
	static const char *const bad[] = {
		".git/hooks/post-checkout", ".GIT/config", "sub/.git/config", "../escaped",
		"/tmp/abs", "a/../../b", "./x", "a//b", "a/", "sub/.Git",
	};
	static const char *const good[] = { "a.txt", ".gitignore", "x/.github/y", "a/..b/c",
					    ".git-x", "..a", ".gits/config" };
	struct ix x;

	for (unsigned v = 2; v <= 4; v++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
			struct ward_gitlinks g = { 0 };

			start(&x, v, 20, 2);
			entry(&x, 0100644, "a.txt", false);
			entry(&x, 0100755, bad[i], false);
			finish(&x);
			ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
			ck_assert_msg(g.unsafe && strcmp(g.unsafe, bad[i]) == 0, "v%u %s: %s", v,
				      bad[i], g.unsafe ? g.unsafe : "(none)");
			ward_gitlinks_release(&g);
		}
		for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++) {
			struct ward_gitlinks g = { 0 };

			start(&x, v, 20, 1);
			entry(&x, 0100644, good[i], false);
			finish(&x);
			ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
			ck_assert_msg(!g.unsafe, "v%u %s", v, good[i]);
			ward_gitlinks_release(&g);
		}
	}
	/* a sparse index's directory entry ends in '/'; a file's may not */
	for (unsigned v = 2; v <= 4; v++) {
		struct ward_gitlinks g = { 0 };

		start(&x, v, 20, 2);
		entry(&x, 0100644, "a.txt", false);
		entry(&x, 0040000, "dir/", false);
		finish(&x);
		ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
		ck_assert_msg(!g.unsafe, "v%u: %s", v, g.unsafe);
		ward_gitlinks_release(&g);
		start(&x, v, 20, 1);
		entry(&x, 0040000, ".git/", false);
		finish(&x);
		ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
		ck_assert(g.unsafe);
		ward_gitlinks_release(&g);
	}
	/* a split index's replacement entry has no name: named in the shared one */
	{
		struct ward_gitlinks g = { 0 };

		start(&x, 2, 20, 1);
		entry(&x, 0100644, "", false);
		extension(&x, "link", 20);
		finish(&x);
		ck_assert_int_eq(ward_gitindex_parse(x.b, x.n, &g), 0);
		ck_assert(!g.unsafe);
		ward_gitlinks_release(&g);
	}
}
END_TEST

static void refused(const unsigned char *b, size_t n)
{
	struct ward_gitlinks g = { 0 };

	errno = 0;
	ck_assert_msg(ward_gitindex_parse(b, n, &g) == -1, "%zu bytes parsed", n);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_uint_eq(g.n, 0);
}

START_TEST(test_malformed)
{
	struct ix x, y;

	start(&x, 2, 20, 2);
	entry(&x, 0100644, "a", false);
	entry(&x, 0160000, "sub", false);
	finish(&x);
	/* every truncation, and every byte more */
	for (size_t n = 0; n < x.n; n++)
		refused(x.b, n);
	x.b[x.n] = 0;
	refused(x.b, x.n + 1);
	/* a count over what is there */
	y = x;
	y.b[11] = 3;
	refused(y.b, y.n);
	/* not an index, an unknown version */
	y = x;
	memcpy(y.b, "DIRX", 4);
	refused(y.b, y.n);
	y = x;
	y.b[7] = 5;
	refused(y.b, y.n);
	/* an extended entry in version 2 */
	y = x;
	y.b[12 + 60] |= 0x40;
	refused(y.b, y.n);
	/* an extension longer than the file */
	start(&x, 2, 20, 1);
	entry(&x, 0100644, "a", false);
	extension(&x, "TREE", 4);
	finish(&x);
	x.b[12 + 64 + 7] = 200;
	refused(x.b, x.n);
	/* version 4: a prefix dropping more than the previous name has */
	start(&x, 4, 20, 1);
	entry(&x, 0160000, "sub", false);
	finish(&x);
	x.b[12 + 62] = 9;
	refused(x.b, x.n);
}
END_TEST

START_TEST(test_kind)
{
	static const struct {
		const char *rel;
		enum ward_gitindex_kind kind;
	} cases[] = {
		{ "index", WARD_GITINDEX_SURE },
		{ "sharedindex.0123abcd", WARD_GITINDEX_SURE },
		{ "worktrees/wt/index", WARD_GITINDEX_SURE },
		{ "worktrees/wt/sharedindex.12", WARD_GITINDEX_SURE },
		{ "modules/lib/index", WARD_GITINDEX_SURE },
		{ "modules/vendor/lib/index", WARD_GITINDEX_SURE },
		{ "modules/refs/index", WARD_GITINDEX_SURE },
		{ "refs/heads/index", WARD_GITINDEX_MAYBE },
		{ "logs/refs/heads/index", WARD_GITINDEX_MAYBE },
		{ "modules/lib/refs/heads/index", WARD_GITINDEX_MAYBE },
		{ "worktrees/wt/x/index", WARD_GITINDEX_MAYBE },
		{ "index.lock", WARD_GITINDEX_NONE },
		{ "sharedindex.", WARD_GITINDEX_NONE },
		{ "refs/heads/indexer", WARD_GITINDEX_NONE },
		{ "next-index-42", WARD_GITINDEX_NONE },
		{ "HEAD", WARD_GITINDEX_NONE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		ck_assert_msg(ward_gitindex_kind(cases[i].rel) == cases[i].kind, "%s: %d",
			      cases[i].rel, (int)ward_gitindex_kind(cases[i].rel));
}
END_TEST

/* Indexes git itself wrote: versions 2, 3 (an intent-to-add entry is
 * extended) and 4, SHA-1 and SHA-256 repositories, with a gitlink. */
START_TEST(test_real_git)
{
	static const char *const formats[] = { "sha1", "sha256" };
	char *dir = harness_tmpdir(), cmd[8192], path[4200], *out = NULL;
	char *sh[] = { (char *)"/bin/sh", (char *)"-c", cmd, NULL };

	for (size_t f = 0; f < 2; f++) {
		for (int v = 2; v <= 4; v++) {
			struct ward_gitlinks g = { 0 };
			unsigned char *buf;
			FILE *fp;
			long n;

			snprintf(cmd, sizeof(cmd),
				 "set -e; cd '%s'; rm -rf r; git init -q --object-format=%s r; cd r; "
				 "echo a > a.txt; mkdir -p d/e; echo b > d/e/b.txt; git add .; "
				 "h=$(git hash-object a.txt); git update-index --add --cacheinfo 160000,$h,sub; "
				 "git update-index --add --cacheinfo 160000,$h,d/lib; "
				 "touch d/e/new; git add -N d/e/new; git update-index --index-version %d; "
				 "echo ok",
				 dir, formats[f], v);
			free(out);
			out = NULL;
			ck_assert_msg(harness_capture(sh, &out, NULL) == 0, "git: %s", out);
			snprintf(path, sizeof(path), "%s/r/.git/index", dir);
			ck_assert((fp = fopen(path, "rb")) != NULL);
			fseek(fp, 0, SEEK_END);
			n = ftell(fp);
			rewind(fp);
			buf = malloc((size_t)n);
			ck_assert(fread(buf, 1, (size_t)n, fp) == (size_t)n);
			fclose(fp);
			ck_assert_msg(ward_gitindex_parse(buf, (size_t)n, &g) == 0, "%s v%d", formats[f], v);
			ck_assert_msg(g.n == 2 && ward_gitlinks_has(&g, "sub") && ward_gitlinks_has(&g, "d/lib"),
				      "%s v%d: %zu gitlinks", formats[f], v, g.n);
			ward_gitlinks_release(&g);
			free(buf);
		}
	}
	free(out);
	harness_rmtree(dir);
	free(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("gitindex");
	TCase *tc = harness_tcase(s, "gitlinks", NULL);

	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_union);
	tcase_add_test(tc, test_unsafe_paths);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_kind);
	tc = harness_tcase(s, "real-git", "devtools");
	tcase_add_test(tc, test_real_git);
	return harness_main(s);
}
