# Sourced by the interop scripts: a temporary work directory, the mock LLM and
# `pincer gateway run` on free loopback ports with a temporary PINCER_HOME whose config points
# model `mock/gpt-4o-mini` at the mock, and a trap that leaves no process behind.
#
#   source interop/fixture.sh; fixture_init NAME; <write "$work/scenario.json">; fixture_start
#
# Sets: root, work, bin, mock_url, token, port, PINCER_HOME (exported). Logs in $work.

fixture_init() {
  fixture_name=$1
  root=$(pwd)
  work=$(mktemp -d)
  fixture_pids=()
  trap fixture_cleanup EXIT
}

fixture_cleanup() {
  for pid in "${fixture_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${fixture_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}

fixture_fail() {
  echo "$fixture_name: $1" >&2
  [ -f "$2" ] && cat "$2" >&2
  exit 1
}

# Builds the binaries, starts the mock on $work/scenario.json, then the gateway.
fixture_start() {
  cargo build --locked -q -p pincer -p pincer-testkit
  bin="$root/target/debug"
  "$bin/pincer-mock-llm" --scenario "$work/scenario.json" > "$work/mock.out" 2>&1 &
  fixture_pids+=($!)
  for _ in $(seq 1 100); do grep -q 'listening on' "$work/mock.out" 2>/dev/null && break; sleep 0.05; done
  mock_url=$(grep -o 'http://[0-9.:]*' "$work/mock.out" | head -1)
  [ -n "$mock_url" ] || fixture_fail "the mock LLM did not start" "$work/mock.out"

  export PINCER_HOME="$work/pincer"
  mkdir -p "$PINCER_HOME"
  cat > "$PINCER_HOME/pincer.json5" <<JSON5
{ models: { providers: { mock: { baseUrl: "$mock_url/v1", api: "openai-completions", apiKey: "mock-key",
    models: [{ id: "gpt-4o-mini" }] } } },
  agents: { defaults: { model: "mock/gpt-4o-mini" } } }
JSON5
  token="$fixture_name-$(date +%s%N)"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  PINCER_GATEWAY_TOKEN="$token" "$bin/pincer" gateway run --port "$port" > "$work/gateway.log" 2>&1 &
  fixture_pids+=($!)
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.05; done
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || fixture_fail "the gateway did not start" "$work/gateway.log"
}
