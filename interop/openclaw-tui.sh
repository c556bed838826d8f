#!/usr/bin/env bash
# Interop: the official `openclaw tui` (npm) chatting with a Pincer gateway, driven inside
# tmux like a person at a terminal. Installs what it needs (node 26 and openclaw into
# interop/.cache as openclaw.sh does; Debian's `tmux` from apt when missing), starts the mock
# LLM and `pincer gateway run` on free loopback ports with a temporary home, then in
# `openclaw tui --url ws://127.0.0.1:<port> --token <t>`:
#   waits for "gateway connected", sends a message and waits for the mock's reply on the
#   screen, runs `/status` (answered by the gateway, not the model), `/think off`, `/new` (a
#   new session) and `/sessions` (the picker lists both), leaves with Ctrl+D,
# and checks that no screen showed an error line ("unknown method", "not connected",
# "failed", "error"), that the TUI exited 0 and that no process is left behind.
# Screens are kept in target/openclaw-tui.screens.
#
# INTEROP_TARGET=openclaw runs the same against the real OpenClaw gateway
# (`openclaw gateway run`, temporary HOME, the same mock as its model provider): the
# reference the Pincer run is measured against. INTEROP_RUNNER works as in fixture.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source interop/fixture.sh
fixture_init openclaw-tui
target="${INTEROP_TARGET:-pincer}"
ensure_openclaw openclaw-tui
if ! command -v tmux >/dev/null; then
  echo "openclaw-tui: installing tmux from apt"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get install -y -q tmux >/dev/null 2>&1 || {
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q tmux >/dev/null
  }
fi

reply="pong from the mock"
# Every model call gets it (OpenClaw wraps the user's text in context of its own).
cat > "$work/scenario.json" <<JSON
{"default": {"text": "$reply"}}
JSON

# The real OpenClaw gateway on the same mock: HOME is its state directory.
start_openclaw_gateway() {
  cargo build --locked -q -p pincer-testkit
  "$root/target/debug/pincer-mock-llm" --scenario "$work/scenario.json" > "$work/mock.out" 2>&1 &
  fixture_pids+=($!)
  for _ in $(seq 1 100); do grep -q 'listening on' "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
  mock_url=$(grep -o 'http://[0-9.:]*' "$work/mock.out" | head -1)
  [ -n "$mock_url" ] || fixture_fail "the mock LLM did not start" "$work/mock.out"
  mkdir -p "$work/oc-home/.openclaw"
  cat > "$work/oc-home/.openclaw/openclaw.json" <<JSON5
{ gateway: { mode: "local", bind: "loopback" },
  models: { providers: { mock: { baseUrl: "$mock_url/v1", api: "openai-completions", apiKey: "mock-key",
    models: [{ id: "gpt-4o-mini", name: "m" }] } } },
  agents: { defaults: { model: { primary: "mock/gpt-4o-mini" } } } }
JSON5
  token="openclaw-tui-$(date +%s%N)"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  HOME="$work/oc-home" "$node" "$openclaw" gateway run --port "$port" --token "$token" > "$work/gateway.log" 2>&1 &
  fixture_pids+=($!)
  # It takes a while to load its plugins.
  for _ in $(seq 1 600); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.2
  done
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || fixture_fail "openclaw's gateway did not start" "$work/gateway.log"
}

case "$target" in
  pincer) fixture_start ;;
  openclaw) start_openclaw_gateway ;;
  *) fixture_fail "INTEROP_TARGET must be pincer or openclaw" /dev/null ;;
esac
echo "openclaw-tui: openclaw $("$node" "$openclaw" --version 2>/dev/null | tail -1) tui against $target"

sock="$work/tmux.sock"
screens="$root/target/openclaw-tui.screens"
mkdir -p "$root/target" "$work/tui-home"
: > "$screens"
tmux_() { tmux -S "$sock" "$@"; }
cleanup() {
  tmux_ kill-server 2>/dev/null || true
  fixture_cleanup
}
trap cleanup EXIT

fail() {
  echo "openclaw-tui: $1" >&2
  echo "--- last screen ---" >&2; awk 'BEGIN { RS = "----\n" } { last = $0 } END { print last }' "$screens" >&2
  echo "--- tui stderr ---" >&2; cat "$work/tui.err" >&2 2>/dev/null || true
  echo "--- gateway log (tail) ---" >&2; tail -40 "$work/gateway.log" >&2
  exit 1
}
screen() { tmux_ capture-pane -p -t tui; }
# Waits up to $2 seconds (default 30) for the screen to match the extended regex $1; every
# screen seen goes to $screens.
wait_for() {
  local deadline=$(( $(date +%s) + ${2:-30} )) shot
  while [ "$(date +%s)" -lt "$deadline" ]; do
    shot=$(screen 2>/dev/null || true)
    printf '%s\n----\n' "$shot" >> "$screens"
    if grep -qE -- "$1" <<<"$shot"; then
      echo "openclaw-tui: saw \"$1\" ok"
      return 0
    fi
    sleep 0.3
  done
  fail "no \"$1\" on the screen within ${2:-30}s"
}

tui_cmd="HOME='$work/tui-home' '$node' '$openclaw' tui --url 'ws://127.0.0.1:$port' --token '$token'"
tmux_ new-session -d -s tui -x 160 -y 48 "$tui_cmd 2>'$work/tui.err'; echo \$? > '$work/tui.exit'"
wait_for 'gateway connected' 120
tmux_ send-keys -t tui "ping from tmux" Enter
wait_for "$reply" 60
# Typed commands: /status is the gateway's to answer (the TUI sends it as text), /think a
# session setting the TUI patches.
tmux_ send-keys -t tui "/status" Enter
wait_for '[Ss]ession: +agent:main:main' 60
tmux_ send-keys -t tui "/think off" Enter
wait_for 'thinking set to off' 30
tmux_ send-keys -t tui "/new" Enter
wait_for 'new session: agent:main:tui-' 30
new_key=$(screen | grep -oE 'new session: agent:main:tui-[0-9a-f-]+' | head -1 | sed 's/new session: agent:main://')
tmux_ send-keys -t tui "/sessions" Enter
wait_for "→ ${new_key:0:20}" 30
wait_for '^ +main {2,}' 5
tmux_ send-keys -t tui Escape
sleep 0.5
tmux_ send-keys -t tui C-d
for _ in $(seq 1 100); do [ -f "$work/tui.exit" ] && break; sleep 0.1; done
[ -f "$work/tui.exit" ] || fail "the TUI did not exit on Ctrl+D"
[ "$(cat "$work/tui.exit")" = 0 ] || fail "the TUI exited with $(cat "$work/tui.exit")"
echo "openclaw-tui: exited 0 ok"

if grep -nEi 'unknown method|not connected|failed|error' "$screens"; then
  fail "an error line was on the screen (above; all screens in $screens)"
fi
echo "openclaw-tui: no error line ok"
# The session ends with the TUI: no tmux server, no TUI process.
sleep 0.5
if tmux_ has-session 2>/dev/null; then fail "the tmux session is still there"; fi
if pgrep -f "openclaw.mjs tui --url ws://127.0.0.1:$port" >/dev/null; then
  fail "a TUI process is left behind: $(pgrep -af "openclaw.mjs tui --url ws://127.0.0.1:$port")"
fi
echo "openclaw-tui: nothing left behind ok"
echo "9 passed, 0 failed"
