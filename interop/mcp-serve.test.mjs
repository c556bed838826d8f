// `pincer mcp serve` through the official TypeScript MCP SDK's client (started by
// interop/mcp-serve.sh, which passes PINCER_BIN, MCP_SDK and the gateway's port and token
// in the environment). Prints one line per check and "N passed, M failed"; exits 1 on failure.
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`mcp-serve.test.mjs: ${name} is not set (run interop/mcp-serve.sh)`);
  return value;
};
const sdk = env("MCP_SDK");
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StdioClientTransport } = await import(`${sdk}/dist/esm/client/stdio.js`);

const transport = new StdioClientTransport({
  command: env("PINCER_BIN"),
  args: ["mcp", "serve"],
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "pincer-interop", version: "1.0.0" });

let passed = 0, failed = 0;
async function check(name, body) {
  try {
    await body();
    console.log(`mcp-serve: ${name} ok`);
    passed++;
  } catch (e) {
    console.error(`mcp-serve: ${name} FAILED: ${e?.stack ?? e}`);
    failed++;
  }
}
function assertEq(got, want, what) {
  const [g, w] = [JSON.stringify(got), JSON.stringify(want)];
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
}
const textOf = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

await check("initialize", async () => {
  await client.connect(transport);
  const info = client.getServerVersion();
  assertEq(info.name, "pincer", "server name");
  if (!client.getServerCapabilities()?.tools) throw new Error("no tools capability");
});
await check("tools/list", async () => {
  const { tools } = await client.listTools();
  assertEq(tools.map((t) => t.name),
    ["ask", "sessions_list", "sessions_history", "memory_search", "cron_list", "cron_add"], "tools");
  const ask = tools.find((t) => t.name === "ask");
  assertEq(ask.inputSchema.required, ["message"], "ask's required arguments");
});
await check("ask", async () => {
  const progress = [];
  const result = await client.callTool({ name: "ask", arguments: { message: "ping" } }, undefined,
    { onprogress: (p) => progress.push(p.message ?? ""), timeout: 60_000 });
  assertEq(result.isError ?? false, false, "isError");
  assertEq(textOf(result), "pong from pincer over MCP", "reply");
  // The SDK drops progress that arrives after the answer, and rmcp may write the answer
  // ahead of the last notifications: what arrived is the reply's beginning, in order.
  const streamed = progress.join("");
  if (streamed.length === 0 || !"pong from pincer over MCP".startsWith(streamed)) {
    throw new Error(`progress messages: got ${JSON.stringify(streamed)}, want a non-empty prefix of the reply`);
  }
});
await check("sessions_list", async () => {
  const result = await client.callTool({ name: "sessions_list", arguments: {} });
  const keys = JSON.parse(textOf(result)).sessions.map((s) => s.key);
  if (!keys.includes("agent:main:mcp")) throw new Error(`no agent:main:mcp in ${keys}`);
});
await check("sessions_history", async () => {
  const result = await client.callTool({ name: "sessions_history", arguments: { sessionKey: "agent:main:mcp" } });
  const said = JSON.parse(textOf(result)).messages.map((m) => [m.role, m.text]);
  assertEq(said, [["user", "ping"], ["assistant", "pong from pincer over MCP"]], "history");
});
await check("malformed arguments", async () => {
  let error;
  try {
    await client.callTool({ name: "ask", arguments: { text: "no message field" } });
  } catch (e) {
    error = e;
  }
  if (!error) throw new Error("the call did not fail");
  assertEq(error.code, -32602, "error code (invalid params)");
});
await client.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
