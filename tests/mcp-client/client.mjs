// client.mjs WARD WORKDIR — ward serve driven by the official MCP TypeScript
// SDK's client over stdio (tests/integration/test-mcp-sdk.c runs it): the
// tools listed, the shell tool's structuredContent validated by the SDK
// against its outputSchema, a variable set and read back in a second call,
// progress, cancellation, and elicitation for a command on the approval list
// (accept runs it, decline refuses it with ApprovalRequired). Waits are for
// events (a notification, a file); exit 0 and "mcp-sdk: all passed" when
// every check held.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [ward, workdir] = process.argv.slice(2);
if (!ward || !workdir) {
	console.error("usage: client.mjs WARD WORKDIR");
	process.exit(2);
}

function check(cond, what, detail) {
	if (!cond) {
		console.error(`mcp-sdk: FAILED: ${what}${detail === undefined ? "" : ": " + JSON.stringify(detail)}`);
		process.exit(1);
	}
	console.log(`mcp-sdk: ok: ${what}`);
}

const transport = new StdioClientTransport({
	command: ward,
	args: ["serve", "--no-policy", "--workdir", workdir, "--timeout", "20"],
	cwd: workdir,
	stderr: "inherit",
});
const client = new Client({ name: "ward-sdk-test", version: "1.0.0" },
			  { capabilities: { elicitation: {} } });
// what the person answers, one per question
const answers = [];
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
	asked.push(req.params.message);
	return answers.shift() ?? { action: "cancel" };
});
await client.connect(transport);

const { tools } = await client.listTools();
const shell = tools.find((t) => t.name === "shell");
check(shell && shell.outputSchema, "tools/list has the shell tool with an outputSchema",
      tools.map((t) => t.name));

// the SDK validates structuredContent against the outputSchema on each call
const sh = (command, opts) => client.callTool({ name: "shell", arguments: { command } }, undefined, opts);

let r = await sh("export FOO=from-sdk; echo set");
check(!r.isError && r.structuredContent.exit_code === 0 && r.structuredContent.stdout === "set\n",
      "a command runs, structured", r.structuredContent);
r = await sh("echo \"$FOO\"");
check(r.structuredContent.stdout === "from-sdk\n", "the variable is kept for the next call",
      r.structuredContent.stdout);
check(r.content[0].type === "text" && r.content[0].text.includes("from-sdk"),
      "the same as text", r.content);

// progress: the command waits for the client to have seen its first line
let seen = 0;
r = await sh("echo one; until [ -e go ]; do sleep 0.05; done; echo two", {
	onprogress: (p) => {
		seen++;
		if ((p.message ?? "").includes("one"))
			writeFileSync(join(workdir, "go"), "");
	},
	timeout: 15000,
});
check(seen > 0 && r.structuredContent.stdout === "one\ntwo\n", "progress with the output so far",
      { seen, out: r.structuredContent.stdout });

// cancellation: aborted once it started, the next call is answered at once
const ac = new AbortController();
let cancelled = false;
try {
	await sh("echo started; sleep 100", {
		signal: ac.signal,
		onprogress: (p) => { if ((p.message ?? "").includes("started")) ac.abort("stop"); },
		timeout: 15000,
	});
} catch (e) {
	cancelled = true;
}
r = await sh("echo after");
check(cancelled && r.structuredContent.stdout === "after\n", "cancelled, the session goes on",
      r.structuredContent.stdout);

// elicitation: a command on the approval list
mkdirSync(join(workdir, "victim"));
writeFileSync(join(workdir, "victim", "file"), "x");
answers.push({ action: "decline" });
r = await sh("rm -rf victim");
check(r.isError && r.structuredContent.error?.kind === "ApprovalRequired" &&
      existsSync(join(workdir, "victim", "file")) && asked.length === 1,
      "declined: ApprovalRequired, nothing ran", r.structuredContent.error);
answers.push({ action: "accept", content: { approve: true } });
r = await sh("rm -rf victim");
check(!r.isError && !existsSync(join(workdir, "victim")) && asked.length === 2 &&
      asked[1].includes("rm -rf victim"), "accepted: it ran", r.structuredContent.error);

await client.close();
console.log("mcp-sdk: all passed");
