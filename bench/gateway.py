#!/usr/bin/env python3
"""Whole-process numbers of `pincer gateway` against `pincer-mock-llm` in instant mode:

- start-up: time from exec to the first `/readyz` 200 (median of 10 starts);
- idle RSS 10 s after start;
- turns per second and per-turn latency (p50/p99, `agent` request to final response) with
  CLIENTS concurrent WebSocket clients, each on its own session, started over every 20 turns
  (crates/gateway/examples/ws_load.rs);
- RSS after a warm-up of 1,000 turns and after LONG turns in all (growth would be a leak);
- the latency the gateway adds, with one clock (crates/gateway/examples/ws_latency.rs is both
  the client and the model endpoint): `chat.send` to the first byte of the model request,
  and a model delta to its `agent` event.

    python3 bench/gateway.py [--clients 100] [--turns 10000] [--long 100000]

Builds the release binaries first. Prints a Markdown table and one JSON line.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "bench-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def ready(port, timeout=1):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=timeout) as r:
            return r.status == 200
    except OSError:
        return False


def mock_config(mock_url):
    """A `pincer.json5` whose default model is the mock at `mock_url`."""
    return ('{ models: { providers: { mock: { baseUrl: "%s/v1", api: "openai-completions", '
            'apiKey: "k", models: [{ id: "m" }] } } }, agents: { defaults: { model: "mock/m" } } }'
            % mock_url)


def start_gateway(binary, env, port):
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "gateway", "run", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not ready(port):
        if proc.poll() is not None:
            raise SystemExit("the gateway exited during start-up")
        time.sleep(0.0005)
    return proc, (time.perf_counter() - start) * 1000.0


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=15)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--turns", type=int, default=10000, help="turns in the measured run")
    parser.add_argument("--long", type=int, default=100000,
                        help="turns in all before the last RSS reading (0: skip)")
    parser.add_argument("--latency-turns", type=int, default=500)
    args = parser.parse_args()
    # Two builds: naming an example limits cargo to it, so the binaries need their own.
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "pincer", "-p", "pincer-testkit"],
                   cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "pincer-gateway", "--example", "ws_load",
                    "--example", "ws_latency"], cwd=ROOT, check=True)
    target = os.path.join(ROOT, "target", "release")
    pincer = os.path.join(target, "pincer")
    with tempfile.TemporaryDirectory() as tmp:
        scenario = os.path.join(tmp, "scenario.json")
        with open(scenario, "w") as f:
            json.dump({"instant": {"tokens": 8}}, f)
        mock = subprocess.Popen([os.path.join(target, "pincer-mock-llm"), "--scenario", scenario],
                                stdout=subprocess.PIPE, text=True)
        try:
            line = mock.stdout.readline()
            mock_url = line.strip().split()[-1]
            home = os.path.join(tmp, "pincer")
            os.makedirs(home)
            with open(os.path.join(home, "pincer.json5"), "w") as f:
                f.write(mock_config(mock_url))
            env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "PINCER_HOME": home,
                   "PINCER_GATEWAY_TOKEN": TOKEN}
            starts = []
            for _ in range(10):
                port = free_port()
                proc, ms = start_gateway(pincer, env, port)
                starts.append(ms)
                stop(proc)
            port = free_port()
            proc, _ = start_gateway(pincer, env, port)
            try:
                time.sleep(10)
                idle = rss_mib(proc.pid)
                load = os.path.join(target, "examples", "ws_load")
                url = f"ws://127.0.0.1:{port}/"

                def run(total):
                    per_client = max(1, total // args.clients)
                    out = subprocess.run([load, url, TOKEN, str(args.clients), str(per_client)],
                                         check=True, capture_output=True, text=True)
                    return json.loads(out.stdout)

                run(1000)
                after_warmup = rss_mib(proc.pid)
                result = run(args.turns)
                after_run = rss_mib(proc.pid)
                done = 1000 + result["turns"]
                while done < args.long:
                    done += run(min(10000, args.long - done))["turns"]
                after_long = rss_mib(proc.pid)
                peak = rss_mib(proc.pid, "VmHWM")
            finally:
                stop(proc)
            # Latency: a gateway whose model is the latency client's own endpoint.
            llm_port = free_port()
            lat_home = os.path.join(tmp, "pincer-latency")
            os.makedirs(lat_home)
            with open(os.path.join(lat_home, "pincer.json5"), "w") as f:
                f.write('{ models: { providers: { lat: { baseUrl: "http://127.0.0.1:%d/v1", '
                        'api: "openai-completions", apiKey: "k", models: [{ id: "m" }] } } }, '
                        'agents: { defaults: { model: "lat/m" } } }' % llm_port)
            port = free_port()
            proc, _ = start_gateway(pincer, dict(env, PINCER_HOME=lat_home), port)
            try:
                out = subprocess.run([os.path.join(target, "examples", "ws_latency"),
                                      f"ws://127.0.0.1:{port}/", TOKEN, str(llm_port),
                                      str(args.latency_turns)],
                                     check=True, capture_output=True, text=True)
                latency = json.loads(out.stdout)
            finally:
                stop(proc)
        finally:
            mock.terminate()
            mock.wait()
    report = {
        "readyzMs": {"median": statistics.median(starts), "max": max(starts)},
        "idleRssMiB": round(idle, 1),
        "load": result,
        "rssMiB": {"afterWarmup": round(after_warmup, 1), "afterRun": round(after_run, 1),
                   "afterLong": round(after_long, 1), "longTurns": max(done, 0), "peak": round(peak, 1)},
        "latency": latency,
    }
    print("| measure | value |")
    print("|---|---|")
    print(f"| exec to /readyz 200 (median of 10) | {report['readyzMs']['median']:.1f} ms |")
    print(f"| idle RSS after 10 s | {idle:.1f} MiB |")
    print(f"| turns/s, {args.clients} WS clients, {result['turns']} turns | {result['turnsPerSecond']:.0f} |")
    print(f"| turn latency p50 / p99 | {result['latencyMs']['p50']:.1f} / {result['latencyMs']['p99']:.1f} ms |")
    print(f"| RSS after 1,000 turns / {1000 + result['turns']:,} / {done:,} turns | "
          f"{after_warmup:.1f} / {after_run:.1f} / {after_long:.1f} MiB (peak {peak:.1f}) |")
    print(f"| chat.send to first model request byte, p50 / p99 | "
          f"{latency['sendToLlmMs']['p50']:.2f} / {latency['sendToLlmMs']['p99']:.2f} ms |")
    print(f"| model delta to agent event, p50 / p99 | "
          f"{latency['deltaToEventMs']['p50']:.2f} / {latency['deltaToEventMs']['p99']:.2f} ms |")
    print(json.dumps(report))


if __name__ == "__main__":
    main()
