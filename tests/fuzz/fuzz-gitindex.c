/* fuzz-gitindex.c — libFuzzer target for the git index reader: the bytes a
 * sandboxed command left as an index, read by ward on the host. Any crash,
 * leak or sanitizer report is a bug. Seeds: indexes git wrote (versions 2,
 * 3 and 4, with gitlinks and extensions), tests/fuzz/gitindex. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/workdir/workdir-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ward_gitlinks g = { 0 };

	if (ward_gitindex_parse(data, size, &g) == 0) {
		/* sorted and unique, every one found */
		for (size_t i = 0; i < g.n; i++) {
			if (i && strcmp(g.paths[i - 1], g.paths[i]) >= 0)
				abort();
			if (!ward_gitlinks_has(&g, g.paths[i]))
				abort();
		}
	}
	ward_gitlinks_release(&g);
	return 0;
}
