#!/usr/bin/env bash
# Interop: the web chat page (a plain GET of the gateway's `/`) in a real headless Chromium.
# Installs what it needs: Debian's `chromium` (apt) unless /usr/bin/chromium exists, and the
# npm package `playwright-core` (never a bundled browser) into interop/.cache/webchat. Starts
# the mock LLM and `pincer gateway run` on free loopback ports with a temporary home, then
# runs interop/webchat.test.mjs against it: connect with the token from the URL fragment,
# a streamed reply, escaping, a tool call, Abort, the session list and history, `/new`, files
# attached by the button, by paste and by drag-and-drop (the model gets the picture, the
# history shows it), files the agent sends (MEDIA: lines: a picture inline, a download, a
# file outside the workspace refused), a wrong token.
# Screenshot in target/webchat.png. Exits non-zero on failure; leaves no process behind.
set -euo pipefail
cd "$(dirname "$0")/.."
source interop/fixture.sh
fixture_init webchat
cache="$root/interop/.cache/webchat"

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

# "hello" streams in 3-character pieces 60 ms apart; "use a tool" calls `read` once, then
# answers; "slow" streams for ~20 s (to abort); anything else is echoed ("mock: <text>").
cat > "$work/scenario.json" <<'JSON'
{"rules": [
  {"match": {"lastUserContains": "hello browser"},
   "reply": {"text": "Hello from the mock, streamed in pieces.", "chunkSize": 3, "delayMs": 60}},
  {"match": {"lastUserContains": "use a tool"},
   "reply": {"toolCalls": [{"name": "read", "arguments": {"path": "AGENTS.md"}}]}},
  {"match": {"toolResult": "read"}, "reply": {"text": "I read it."}},
  {"match": {"lastUserContains": "send me the files"},
   "reply": {"text": "Here they are.\nMEDIA:out/chart.png\nMEDIA:out/notes.txt\nMEDIA:/etc/passwd"}},
  {"match": {"lastUserContains": "slow"},
   "reply": {"text": "This reply is long and slow, so there is time to press Abort before it ends. This reply is long and slow, so there is time to press Abort before it ends.", "chunkSize": 2, "delayMs": 250}}
]}
JSON
fixture_start
# The files the "send me the files" reply names, in the agent's workspace.
mkdir -p "$PINCER_HOME/agents/main/workspace/out"
base64 -d > "$PINCER_HOME/agents/main/workspace/out/chart.png" <<'PNG'
iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==
PNG
printf 'the notes\n' > "$PINCER_HOME/agents/main/workspace/out/notes.txt"

mkdir -p "$root/target"
if ! NODE_PATH="$cache/node_modules" WEBCHAT_URL="http://127.0.0.1:$port/" WEBCHAT_TOKEN="$token" \
  WEBCHAT_MOCK_URL="$mock_url" \
  CHROMIUM="$chromium" WEBCHAT_PROFILE="$work/profile" WEBCHAT_SCREENSHOT="$root/target/webchat.png" \
  PLAYWRIGHT_CORE="$cache/node_modules/playwright-core/index.mjs" \
  node "$root/interop/webchat.test.mjs"; then
  echo "--- gateway log ---" >&2; cat "$work/gateway.log" >&2
  exit 1
fi
