/* cmd-frontdoor.c — the front door as the CLI uses it: the y/N question on
 * the terminal for a command that needs approval. */
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "runtime/cli/cli-internal.h"
#include "ward/frontdoor.h"

static bool ask_tty(void *ctx, const struct ward_verdict *v)
{
	FILE *tty = fopen("/dev/tty", "r+e");
	char line[64] = "";
	bool yes;

	(void)ctx;
	if (!tty)
		return false;
	/* only what is typed once the question shows answers it: not keys
	 * typed ahead, nor a terminal's answer to an earlier command's query */
	tcflush(fileno(tty), TCIFLUSH);
	/* the command as the person must see it: a carriage return or an
	 * erase-line sequence must not show them another command */
	fprintf(tty, "ward: '%s' needs approval (%s: %s)\nrun it? [y/N] ", ward_shown(v->segment),
		ward_shown(v->rule), ward_shown(v->words));
	fflush(tty);
	yes = fgets(line, sizeof(line), tty) &&
	      (strcmp(line, "y\n") == 0 || strcmp(line, "Y\n") == 0 || strcmp(line, "yes\n") == 0);
	fclose(tty);
	return yes;
}

/* A refusal says what lifts it (the rate limit's message does already):
 * the person may be the one who writes the policy. */
static void name_the_way_out(struct ward_error *e)
{
	size_t n = strlen(e->message);
	const char *rule = e->rule[0] ? e->rule : "RULE";

	/* here NotAuthorized and ApprovalRequired are a validator's verdict */
	if (e->kind == WARD_ERR_NOT_AUTHORIZED)
		snprintf(e->message + n, sizeof(e->message) - n,
			 " (the policy's validators.relax asks instead of refusing, "
			 "validators.remove lifts the rule: [\"%s\"])",
			 rule);
	else if (e->kind == WARD_ERR_APPROVAL_REQUIRED)
		snprintf(e->message + n, sizeof(e->message) - n,
			 " (--approve runs it; the policy's validators.remove lifts the rule: "
			 "[\"%s\"])",
			 rule);
}

int ward_cli_front_door(const struct ward_config *cfg, const char *command, char *const argv[],
			bool approved, bool may_ask, struct ward_error **err)
{
	struct ward_admission adm = { .approved = approved };
	struct ward_verdict v;
	int rc;

	/* Only a person at the terminal can answer; stdin of --json is the
	 * request, and a pipe is a program. */
	if (may_ask && isatty(0))
		adm.ask = ask_tty;
	rc = ward_frontdoor_check(cfg, command, argv, &adm, &v, err);
	ward_verdict_release(&v);
	if (rc < 0 && err && *err)
		name_the_way_out(*err);
	return rc;
}
