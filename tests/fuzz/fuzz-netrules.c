/* fuzz-netrules.c — libFuzzer target for the rules the proxy applies to a
 * request it has the plaintext of (ward/netrules.h): the input is a request
 * as the sandbox sends it (head, then body), with "@T@" and "@G@" standing
 * for the two secrets' stand-ins (random per run, so the fuzzer could not
 * find them). Besides crashes and sanitizer reports, it checks the promise:
 * a real value leaves only towards its secret's hosts (unless the input had
 * it already), and a stand-in never leaves at all once judged. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ward/netpolicy.h"
#include "ward/netrules.h"
#include "ward/proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REAL_T "R3alT0ken"
#define REAL_G "gh-Real-V4lue"

static const char *lookup(const char *name)
{
	if (strcmp(name, "T") == 0)
		return REAL_T;
	if (strcmp(name, "G") == 0)
		return REAL_G;
	if (strcmp(name, "K") == 0)
		return "cred";
	return NULL;
}

static struct ward_netpolicy P;
static struct ward_netrules *R;

static void init(void)
{
	static const char *const rules[] = { "api.example.com GET,HEAD /repos/**",
					     "api.example.com POST /repos/*/issues",
					     "*.rules.example * /a/**/b/*.json" };

	ward_netpolicy_init(&P);
	if (ward_netpolicy_add_secret(&P, "T=api.example.com,10.1.2.3:8080", NULL) < 0 ||
	    ward_netpolicy_add_secret(&P, "G=*.github.com", NULL) < 0 ||
	    ward_netpolicy_add_credential(&P, "api.example.com=X-K: ${K}", NULL) < 0)
		abort();
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (ward_netpolicy_add_request(&P, rules[i], NULL) < 0)
			abort();
	R = ward_netrules_new(&P, lookup, NULL);
	if (!R)
		abort();
}

/* data with the markers replaced by the stand-ins */
static char *expand(const uint8_t *data, size_t size, size_t *out_len)
{
	char *o = malloc(size * (WARD_NETRULES_STANDIN_LEN / 3 + 1) + 1);
	size_t i = 0, n = 0;

	if (!o)
		return NULL;
	while (i < size) {
		if (i + 3 <= size && data[i] == '@' && data[i + 2] == '@' &&
		    (data[i + 1] == 'T' || data[i + 1] == 'G')) {
			const char *s = ward_netrules_standin(R, data[i + 1] == 'T' ? 0 : 1);

			memcpy(o + n, s, WARD_NETRULES_STANDIN_LEN);
			n += WARD_NETRULES_STANDIN_LEN;
			i += 3;
			continue;
		}
		o[n++] = (char)data[i++];
	}
	o[n] = '\0';
	*out_len = n;
	return o;
}

static bool listed(size_t k, const char *host, uint16_t port)
{
	for (size_t i = 0; i < P.secrets[k].n_hosts; i++)
		if (ward_net_rule_matches(&P.secrets[k].hosts[i], host, port))
			return true;
	return false;
}

static void check(const struct ward_http_request *req, const char *in, size_t n,
		  const struct ward_netrules_verdict *v)
{
	if (!v->allow || !v->out)
		return;
	if (memmem(v->out, v->out_len, REAL_T, strlen(REAL_T)) && !memmem(in, n, REAL_T, strlen(REAL_T)) &&
	    !listed(0, req->host, req->port))
		abort(); /* T's value to a host not T's */
	if (memmem(v->out, v->out_len, REAL_G, strlen(REAL_G)) && !memmem(in, n, REAL_G, strlen(REAL_G)) &&
	    !listed(1, req->host, req->port))
		abort();
	for (size_t k = 0; k < 2; k++)
		if (!listed(k, req->host, req->port) &&
		    memmem(v->out, v->out_len, ward_netrules_standin(R, k), WARD_NETRULES_STANDIN_LEN))
			abort(); /* a stand-in let through to another host */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ward_http_request req;
	struct ward_netrules_verdict v;
	char reason[WARD_NET_RULE_MAX];
	size_t n;
	int status;
	char *in;

	if (!R)
		init();
	in = expand(data, size, &n);
	if (!in)
		return 0;
	if (ward_http_parse_request(in, n, &req, &status, reason, sizeof(reason)) == 1) {
		ward_netrules_request(R, &req, in, NULL, 0, false, &v);
		check(&req, in, n, &v);
		if (v.allow && v.need_body) {
			ward_netrules_verdict_release(&v);
			/* the rest as the body (the proxy hands over a checked one;
			 * the engine must not trust it either) */
			ward_netrules_request(R, &req, in, in + req.head_len, n - req.head_len, true,
					      &v);
			check(&req, in, n, &v);
		}
		ward_netrules_verdict_release(&v);
	}
	free(in);
	return 0;
}
