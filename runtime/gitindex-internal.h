/* gitindex-internal.h — the submodules a git index names.
 *
 * A git index may hold "gitlinks": entries of mode 160000 that make a path
 * a submodule. The host's `git status` at the top of a repository descends
 * into every populated submodule and runs git there, which reads that
 * directory's own config (core.fsmonitor, core.hooksPath...). A command in a
 * direct-mode workdir can make a nested repository with a config of its
 * choosing (`git init sub`); once the index records `sub` as a gitlink, the
 * host's next `git status` at the top runs that config's code. So when a
 * command changed an index, the gitlinks of the new one must all be gitlinks
 * of the old one. Split indexes (sharedindex.*) count with their index.
 *
 * The parser is pure (a buffer in, the sorted paths out); the reading
 * helpers open files below a directory without following a link. */
#ifndef WARD_GITINDEX_INTERNAL_H
#define WARD_GITINDEX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

struct ward_gitlinks {
	char **paths; /* sorted, owned */
	size_t n;
	bool unnamed; /* a gitlink with an empty name (a split index's
			 replacement of a shared entry): cannot be judged */
};

/* Parse an index file (versions 2, 3 and 4; read with SHA-1 and with
 * SHA-256 object names, the gitlinks of every reading whose entries and
 * extensions end exactly at the trailing checksum kept). Adds them to
 * *out (which may hold some already: the union is kept sorted and unique).
 * Returns 0, or -1 with errno EINVAL for anything that is not a well-formed
 * index, ENOMEM. */
int ward_gitindex_parse(const unsigned char *buf, size_t len, struct ward_gitlinks *out);

bool ward_gitlinks_has(const struct ward_gitlinks *g, const char *path);

void ward_gitlinks_release(struct ward_gitlinks *g);

/* Whether rel (relative to a git directory) is a file git reads as an index
 * of that git directory or of one inside it (named index or sharedindex.*):
 * SURE at the top, in a worktree's directory (worktrees/NAME/) and in a
 * submodule's (modules/NAME.../) with no name of git's data directories on
 * the way; MAYBE where the path can also be data (a branch named "index":
 * refs/heads/index, or a submodule named "refs"). */
enum ward_gitindex_kind {
	WARD_GITINDEX_NONE = 0,
	WARD_GITINDEX_SURE,
	WARD_GITINDEX_MAYBE,
};
enum ward_gitindex_kind ward_gitindex_kind(const char *rel);

/* The verdict on an index-like file a command changed in a git directory's
 * writable layer: rel relative to upper (the layer) and lower (the git
 * directory as it was). True when the new file must not reach the host: it
 * names a gitlink the old index of that git directory (and its shared
 * indexes) did not, or a gitlink with no name; or, for a SURE index, it
 * cannot be read whole as an index (not a regular file, a link, over 1 GiB,
 * malformed — deny by default); a MAYBE that is no index is data. *which
 * gets the first new gitlink's path ("" if none is to blame), truncated to
 * n bytes. Files are opened without following a link, below upper and
 * lower. */
bool ward_gitindex_refused(const char *upper, const char *lower, const char *rel,
			   enum ward_gitindex_kind kind, char *which, size_t n);

/* The same for rel relative to a workdir (an overlay change set's entry,
 * ".git/index", "sub/.git/modules/lib/index"): the git directory is the
 * path up to its first ".git" component, in upper (the change set's layer)
 * and in workdir (as it is). False for what lies in no git directory or is
 * no index. */
bool ward_gitindex_workdir_refused(const char *upper, const char *workdir, const char *rel);

#endif
