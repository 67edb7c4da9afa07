/* cmd-text.c — what the CLI prints for a person, made inert: names, commands
 * and messages that may hold what a command wrote go through
 * ward_text_escape() (ward/request.h) on their way to the terminal. JSON
 * output never comes here. */
#include <stdlib.h>
#include <string.h>

#include "runtime/cli/cli-internal.h"
#include "ward/request.h"

const char *ward_shown(const char *s)
{
	/* a few at once, so that one printf() can show several; per thread
	 * (ward serve's threads print errors too) */
	static __thread char *ring[8];
	static __thread unsigned next;
	char **slot = &ring[next++ % 8];

	free(*slot);
	*slot = ward_text_escape(s, s ? strlen(s) : 0, 0);
	return *slot ? *slot : "?";
}
