#!/usr/bin/env python3
"""Spawn-to-ready of an RPC worker: the time from starting the process to the response of
its first command (`get_state`), for `pincer rpc` and, when it is installed, the real
`pi --mode rpc` (`bash interop/pi-rpc.sh` installs it into interop/.cache/pi). Reports the
median and p95 over the runs, and the worker's RSS once ready.

    python3 bench/rpc.py [--runs 30] [--binary target/release/pincer] [--pi PATH/cli.js]

Builds the release binary first unless --binary is given. Each worker gets a temporary
home with no keys, so `pincer rpc` answers with the offline stub and pi is started with
`PI_OFFLINE=1`: only start-up is measured, no model is called.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def spawn_to_ready(argv, env, cwd):
    """ms from spawn to the `get_state` response, and the RSS then."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdin.write(b'{"id":"ready","type":"get_state"}\n')
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            sys.exit(f"{argv[0]} exited before answering")
        msg = json.loads(line)
        if msg.get("type") == "response" and msg.get("id") == "ready":
            break
    elapsed = (time.perf_counter() - start) * 1000.0
    rss = rss_mib(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=10)
    return elapsed, rss


def measure(name, argv, env, cwd, runs):
    samples = [spawn_to_ready(argv, env, cwd) for _ in range(runs)]
    times = sorted(s[0] for s in samples)
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    rss = statistics.median(s[1] for s in samples)
    print(f"| {name} | {statistics.median(times):.1f} ms | {p95:.1f} ms | {rss:.1f} MiB |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--binary")
    parser.add_argument("--pi", help="pi's dist/cli.js")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = args.binary
    if binary is None:
        subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "pincer"],
                       cwd=root, check=True)
        binary = os.path.join(root, "target", "release", "pincer")
    binary = os.path.abspath(binary)
    pi = args.pi or os.path.join(
        root, "interop", ".cache", "pi", "node_modules", "@mariozechner",
        "pi-coding-agent", "dist", "cli.js")
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home,
               "PINCER_HOME": os.path.join(tmp, "pincer")}
        print("| Worker | spawn to ready, median | p95 | RSS when ready |")
        print("|---|---|---|---|")
        measure("`pincer rpc`", [binary, "rpc", "--session-dir", os.path.join(tmp, "s1")],
                env, tmp, args.runs)
        node = shutil.which("node")
        if node and os.path.exists(pi):
            pi_env = dict(env, PI_OFFLINE="1", PI_CODING_AGENT_DIR=os.path.join(tmp, "pi"))
            measure("`pi --mode rpc`", [node, pi, "--mode", "rpc", "--session-dir",
                                         os.path.join(tmp, "s2")], pi_env, tmp, args.runs)
        else:
            print(f"(pi not found at {pi}: `bash interop/pi-rpc.sh` installs it)")


if __name__ == "__main__":
    main()
