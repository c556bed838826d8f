#!/usr/bin/env bash
# Interop: OpenClaw's Control UI (the web app in the `openclaw` npm package's
# dist/control-ui/) served by `pincer gateway run --control-ui <dir>` at /control/, in a real
# headless Chromium. Installs what it needs as the other interop scripts do: node 26 and
# openclaw into interop/.cache (openclaw.sh's cache), Debian's `chromium` (apt) unless
# /usr/bin/chromium exists, and `playwright-core` (never a bundled browser) into
# interop/.cache/webchat (webchat.sh's). Starts the mock LLM and the gateway on free loopback
# ports with a temporary home, then runs interop/control-ui.test.mjs against
# http://127.0.0.1:<port>/control/#token=<token>: the app loads and connects; a message gets
# the mock's reply streamed in pieces and the run settles; a reload shows the history; `/new`
# starts a new session; switching sessions shows each one's history; no "unknown method" or
# other error on the page, no failed gateway call, no console error.
# Screenshots in target/control-ui-*.png. Exits non-zero on failure; leaves no process behind.
#
# INTEROP_TARGET=openclaw runs the same against the real OpenClaw gateway serving its own
# UI at the same path (`gateway.controlUi.basePath: "/control"`, temporary HOME, the same mock
# as its model provider): the reference the Pincer run is measured against.
# INTEROP_RUNNER works as in fixture.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source interop/fixture.sh
fixture_init control-ui
target="${INTEROP_TARGET:-pincer}"
ensure_openclaw control-ui
app="$cache/node_modules/openclaw/dist/control-ui"
[ -f "$app/index.html" ] || fixture_fail "the openclaw package has no dist/control-ui/index.html" /dev/null

chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  echo "control-ui: installing chromium from apt"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get install -y -q chromium >/dev/null 2>&1 || {
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q chromium >/dev/null
  }
fi
pw_cache="$cache/webchat"
# Its own package.json, so npm never treats interop/.cache (openclaw's) as the project.
if [ ! -f "$pw_cache/node_modules/playwright-core/package.json" ]; then
  echo "control-ui: installing playwright-core from npm"
  mkdir -p "$pw_cache"
  [ -f "$pw_cache/package.json" ] || echo '{"private": true}' > "$pw_cache/package.json"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$pw_cache" --no-audit --no-fund \
    --loglevel=error playwright-core@1
fi

# Every model call gets the same reply, streamed in 3-character pieces 60 ms apart (OpenClaw
# adds a user message of its own after the user's, so replies cannot be told apart by what
# was asked; the sessions are told apart by their user messages).
cat > "$work/scenario.json" <<'JSON'
{"default": {"text": "Hello from the mock, streamed in pieces.", "chunkSize": 3, "delayMs": 60}}
JSON

# The real OpenClaw gateway on the same mock, serving its UI at /control: HOME is its state.
start_openclaw_gateway() {
  cargo build --locked -q -p pincer-testkit
  "$root/target/debug/pincer-mock-llm" --scenario "$work/scenario.json" > "$work/mock.out" 2>&1 &
  fixture_pids+=($!)
  for _ in $(seq 1 100); do grep -q 'listening on' "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
  mock_url=$(grep -o 'http://[0-9.:]*' "$work/mock.out" | head -1)
  [ -n "$mock_url" ] || fixture_fail "the mock LLM did not start" "$work/mock.out"
  mkdir -p "$work/oc-home/.openclaw"
  cat > "$work/oc-home/.openclaw/openclaw.json" <<JSON5
{ gateway: { mode: "local", bind: "loopback", controlUi: { basePath: "/control" } },
  models: { providers: { mock: { baseUrl: "$mock_url/v1", api: "openai-completions", apiKey: "mock-key",
    models: [{ id: "gpt-4o-mini", name: "m" }] } } },
  agents: { defaults: { model: { primary: "mock/gpt-4o-mini" } } } }
JSON5
  token="control-ui-$(date +%s%N)"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  HOME="$work/oc-home" "$node" "$openclaw" gateway run --port "$port" --token "$token" > "$work/gateway.log" 2>&1 &
  fixture_pids+=($!)
  # It takes a while to load its plugins.
  for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$port/control/" >/dev/null 2>&1 && break
    sleep 0.2
  done
  curl -sf "http://127.0.0.1:$port/control/" >/dev/null || fixture_fail "openclaw's gateway did not start" "$work/gateway.log"
}

case "$target" in
  pincer)
    fixture_gateway_args=(--control-ui "$app")
    fixture_start
    ;;
  openclaw) start_openclaw_gateway ;;
  *) fixture_fail "INTEROP_TARGET must be pincer or openclaw" /dev/null ;;
esac
echo "control-ui: openclaw $("$node" "$openclaw" --version 2>/dev/null | tail -1)'s Control UI against $target"

mkdir -p "$root/target"
if ! NODE_PATH="$pw_cache/node_modules" CUI_URL="http://127.0.0.1:$port/control/" CUI_TOKEN="$token" \
  CUI_TARGET="$target" CHROMIUM="$chromium" CUI_PROFILE="$work/profile" \
  CUI_SCREENSHOTS="$root/target/control-ui-$target" \
  PLAYWRIGHT_CORE="$pw_cache/node_modules/playwright-core/index.mjs" \
  node "$root/interop/control-ui.test.mjs"; then
  echo "--- gateway log (tail) ---" >&2; tail -60 "$work/gateway.log" >&2
  exit 1
fi
