#!/usr/bin/env bash
# Interop: the real pi (npm `@mariozechner/pi-coding-agent`, `pi --mode rpc`, on the
# machine's Node >= 20.6) against `pincer rpc`, through the gateway's RPC client: the same
# chat, tool, abort and steering scenarios on both must give the same event sequences, and
# transcripts must cross (pi opens Pincer's, Pincer resumes pi's), and pi's session-tree
# commands (`get_fork_messages`, `fork`, a fork of an unknown entry, `export_html`) must
# answer alike (the same texts, keys and types, the same branch afterwards); and the gateway with
# `agent.runner: "rpc"` on a pool of pi workers serves the WS flows (chat, tools, steering,
# abort, a worker killed mid-turn) as it does on `pincer rpc` workers. Installs pi into
# interop/.cache/pi when missing; the tests themselves start the mock LLM and the workers
# and leave no process behind.
set -euo pipefail
cd "$(dirname "$0")/.."
source interop/fixture.sh
root=$(pwd)
ensure_pi
cli="$pi_cli"
node="$pi_node"
version=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["version"])' "$(dirname "$cli")/../package.json")
echo "interop: pi $version on node $("$node" --version)"
PINCER_PI_CLI="$cli" PINCER_NODE="$node" \
  cargo test --locked -q -p pincer --test it -- --ignored --test-threads 1 rpc_interop:: gateway_rpc_runner::
