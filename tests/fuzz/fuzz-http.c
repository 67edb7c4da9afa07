/* fuzz-http.c — libFuzzer target for what the proxy parses from the
 * sandbox and from upstream servers inside an intercepted TLS connection:
 * origin-form request heads (ward_http_parse_origin), the forwarded head
 * built from them (ward_http_forward_head), response heads
 * (ward_http_parse_response), chunked bodies (ward_chunked_feed), and the
 * plain proxy request parser beside them. Any crash, leak or sanitizer
 * report is a bug. Seeds: tests/fuzz/http. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ward/proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void feed(const char *b, size_t n)
{
	struct ward_chunked c = { 0 };
	bool done = false;
	ssize_t k;

	/* in two pieces: the state machine must not care where reads split */
	k = ward_chunked_feed(&c, b, n / 2, &done);
	if (k < 0 || (size_t)k > n / 2)
		return;
	if (!done && (size_t)k == n / 2)
		k = ward_chunked_feed(&c, b + n / 2, n - n / 2, &done);
	if (k > (ssize_t)n)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct ward_http_request req;
	struct ward_http_response rs;
	struct ward_http_body body;
	struct ward_http_header add[] = { { "Authorization", "Bearer x" } };
	char reason[256];
	int status, rc;
	size_t len;

	rc = ward_http_parse_origin(buf, size, "api.example.com", false, 443, &req, &status, reason,
				    sizeof(reason));
	if (rc == 1) {
		char *head;

		if (req.head_len > size || req.target < buf || req.target + req.target_len > buf + size)
			abort();
		head = ward_http_forward_head(buf, &req, add, 1, &len, &body, &status, reason,
					      sizeof(reason));
		if (head) {
			if (strlen(head) != len || !strstr(head, "\r\nAuthorization: Bearer x\r\n"))
				abort();
			free(head);
			if (body.chunked)
				feed(buf + req.head_len, size - req.head_len);
		}
		(void)ward_http_header_lists(buf, req.head_len, "connection", "close");
	}
	rc = ward_http_parse_response(buf, size, size && (data[0] & 1), &rs, reason, sizeof(reason));
	if (rc == 1) {
		if (rs.head_len > size)
			abort();
		if (rs.chunked)
			feed(buf + rs.head_len, size - rs.head_len);
	}
	rc = ward_http_parse_request(buf, size, &req, &status, reason, sizeof(reason));
	if (rc == 1 && !req.is_connect) {
		char *head = ward_http_forward_head(buf, &req, add, 1, &len, &body, &status, reason,
						    sizeof(reason));

		free(head);
	}
	return 0;
}
