#!/usr/bin/env bash
# Interop: the web chat page (a plain GET of the gateway's `/`) in a real headless Chromium.
# Installs what it needs: Debian's `chromium` (apt) unless /usr/bin/chromium exists, and the
# npm package `playwright-core` (never a bundled browser) into interop/.cache/webchat. Starts
# the mock LLM and `pincer gateway run` on free loopback ports with a temporary home, then
# runs interop/webchat.test.mjs against it: connect with the token from the URL fragment,
# a streamed reply, escaping, a tool call, Abort, the session list and history, `/new`, a wrong token.
# Screenshot in target/webchat.png. Exits non-zero on failure; leaves no process behind.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cache="$root/interop/.cache/webchat"
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  echo "webchat: installing chromium from apt"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get install -y -q chromium >/dev/null 2>&1 || {
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q chromium >/dev/null
  }
fi
# Its own package.json, so npm never treats interop/.cache (openclaw.sh's) as the project.
if [ ! -f "$cache/node_modules/playwright-core/package.json" ]; then
  echo "webchat: installing playwright-core from npm"
  mkdir -p "$cache"
  [ -f "$cache/package.json" ] || echo '{"private": true}' > "$cache/package.json"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$cache" --no-audit --no-fund \
    --loglevel=error playwright-core@1
fi

cargo build --locked -q -p pincer -p pincer-testkit
bin="$root/target/debug"

# "hello" streams in 3-character pieces 60 ms apart; "use a tool" calls `read` once, then
# answers; "slow" streams for ~20 s (to abort); anything else is echoed ("mock: <text>").
cat > "$work/scenario.json" <<'JSON'
{"rules": [
  {"match": {"lastUserContains": "hello browser"},
   "reply": {"text": "Hello from the mock, streamed in pieces.", "chunkSize": 3, "delayMs": 60}},
  {"match": {"lastUserContains": "use a tool"},
   "reply": {"toolCalls": [{"name": "read", "arguments": {"path": "AGENTS.md"}}]}},
  {"match": {"toolResult": "read"}, "reply": {"text": "I read it."}},
  {"match": {"lastUserContains": "slow"},
   "reply": {"text": "This reply is long and slow, so there is time to press Abort before it ends. This reply is long and slow, so there is time to press Abort before it ends.", "chunkSize": 2, "delayMs": 250}}
]}
JSON
"$bin/pincer-mock-llm" --scenario "$work/scenario.json" > "$work/mock.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do grep -q 'listening on' "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
mock_url=$(grep -o 'http://[0-9.:]*' "$work/mock.out" | head -1)
[ -n "$mock_url" ] || { echo "webchat: the mock LLM did not start" >&2; cat "$work/mock.out" >&2; exit 1; }

export PINCER_HOME="$work/pincer"
mkdir -p "$PINCER_HOME"
cat > "$PINCER_HOME/pincer.json5" <<JSON5
{ models: { providers: { mock: { baseUrl: "$mock_url/v1", api: "openai-completions", apiKey: "mock-key",
    models: [{ id: "gpt-4o-mini" }] } } },
  agents: { defaults: { model: "mock/gpt-4o-mini" } } }
JSON5
token="webchat-$(date +%s%N)"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PINCER_GATEWAY_TOKEN="$token" "$bin/pincer" gateway run --port "$port" > "$work/gateway.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.05; done
curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || { echo "webchat: the gateway did not start" >&2; cat "$work/gateway.log" >&2; exit 1; }

mkdir -p "$root/target"
if ! NODE_PATH="$cache/node_modules" WEBCHAT_URL="http://127.0.0.1:$port/" WEBCHAT_TOKEN="$token" \
  CHROMIUM="$chromium" WEBCHAT_PROFILE="$work/profile" WEBCHAT_SCREENSHOT="$root/target/webchat.png" \
  PLAYWRIGHT_CORE="$cache/node_modules/playwright-core/index.mjs" \
  node "$root/interop/webchat.test.mjs"; then
  echo "--- gateway log ---" >&2; cat "$work/gateway.log" >&2
  exit 1
fi
