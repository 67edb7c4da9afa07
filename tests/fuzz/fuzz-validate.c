/* fuzz-validate.c — libFuzzer target for the validators: ward_validate() on
 * any string (with the built-in rules), as sh and as bash read it (ward run
 * --shell bash), the verdict rendered as JSON. Any
 * crash, leak or sanitizer report is a bug. `make fuzz-validate`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ward/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	struct ward_verdict v;
	struct ward_error *err = NULL;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	/* sh, bash, and each in overlay mode */
	for (int mode = 0; mode < 4; mode++) {
		if (ward_validate_shell(NULL, s,
					(mode & 1 ? WARD_SHELL_BASH : WARD_SHELL_SH) |
						(mode & 2 ? WARD_VALIDATE_OVERLAY : 0),
					&v, &err) == 0) {
			free(ward_verdict_to_json(&v));
			ward_verdict_release(&v);
		}
		ward_error_free(err);
		err = NULL;
	}
	free(s);
	return 0;
}
