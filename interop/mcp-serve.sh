#!/usr/bin/env bash
# Interop: `pincer mcp serve` driven by the official TypeScript MCP SDK's client (npm
# `@modelcontextprotocol/sdk`, installed into interop/.cache when missing) over stdio,
# against `pincer gateway run` on the mock LLM: the handshake (server "pincer"), the six
# tools, `ask` answering the mock's reply with progress notifications, the session in
# `sessions_list` and `sessions_history`, a malformed call refused as an MCP error.
# The checks are interop/mcp-serve.test.mjs. Exits non-zero on the first failure; leaves no
# process behind.
set -euo pipefail
cd "$(dirname "$0")/.."
source interop/fixture.sh
fixture_init mcp-serve
version="${MCP_SDK_VERSION:-1.30.0}"
cache="$root/interop/.cache"
sdk="$cache/node_modules/@modelcontextprotocol/sdk"
if [ ! -f "$sdk/package.json" ]; then
  echo "mcp-serve: installing @modelcontextprotocol/sdk@$version from npm"
  mkdir -p "$cache"
  [ -f "$cache/package.json" ] || echo '{"private": true}' > "$cache/package.json"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error "@modelcontextprotocol/sdk@$version")
fi
echo "mcp-serve: @modelcontextprotocol/sdk $(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$sdk/package.json") on node $(node --version)"

cat > "$work/scenario.json" <<'JSON'
{"rules": [{"match": {"lastUserContains": "ping"}, "reply": {"text": "pong from pincer over MCP"}}]}
JSON
fixture_start

# `pincer mcp serve` finds the gateway as any `pincer` command does: the port and token
# from the environment, the home from PINCER_HOME (exported by the fixture).
if ! PINCER_BIN="$bin/pincer" PINCER_GATEWAY_PORT="$port" PINCER_GATEWAY_TOKEN="$token" \
  MCP_SDK="$sdk" node "$root/interop/mcp-serve.test.mjs"; then
  echo "--- gateway log ---" >&2; cat "$work/gateway.log" >&2
  exit 1
fi
