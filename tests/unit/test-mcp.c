/* test-mcp.c — the MCP tools are data (runtime/mcp-tools.json, built in):
 * the document parses, every tool names a JSON-RPC method the server has,
 * its schema is an object schema whose required keys it lists, and no tool
 * takes "approved" (a model's tool call never approves a command). */
#include "harness.h"
#include "runtime/cli/serve-internal.h"

#include <string.h>

START_TEST(test_tools_document)
{
	json_t *doc = mcp_tools(), *list, *t;
	size_t i, j;

	ck_assert_ptr_nonnull(doc);
	ck_assert_ptr_eq(mcp_tools(), doc); /* parsed once */
	list = json_object_get(doc, "tools");
	ck_assert(json_is_array(list));
	ck_assert_uint_ge(json_array_size(list), 18);
	json_array_foreach(list, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *method = json_string_value(json_object_get(t, "method"));
		json_t *schema = json_object_get(t, "inputSchema");
		json_t *props = json_object_get(schema, "properties"), *req, *other;
		struct rpc_error e = { 0 };

		ck_assert_ptr_nonnull(name);
		ck_assert_ptr_nonnull(method);
		ck_assert_msg(mcp_resolve(method, &e) != NULL, "tool %s: no method %s", name, method);
		ck_assert(json_is_string(json_object_get(t, "description")));
		ck_assert_str_eq(json_string_value(json_object_get(schema, "type")), "object");
		ck_assert(json_is_object(props));
		ck_assert_msg(!json_object_get(props, "approved"), "tool %s takes approved", name);
		json_array_foreach(json_object_get(schema, "required"), j, req)
			ck_assert_msg(json_object_get(props, json_string_value(req)),
				      "tool %s requires %s, which it does not list", name,
				      json_string_value(req));
		json_array_foreach(list, j, other)
			ck_assert(j == i ||
				  strcmp(json_string_value(json_object_get(other, "name")), name));
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mcp");
	TCase *tc = harness_tcase(s, "mcp", NULL);

	tcase_add_test(tc, test_tools_document);
	return harness_main(s);
}
