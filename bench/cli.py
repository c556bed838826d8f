#!/usr/bin/env python3
"""Whole-process numbers of the `pincer` binary: wall time and peak RSS of
`pincer --version` and of `pincer ask` answered by the offline stub (a fresh session, then
a session that already holds N turns). Reports median and p95 over the runs.

    python3 bench/cli.py [--runs 30] [--binary target/release/pincer]

Builds the release binary first unless --binary is given. Uses a temporary PINCER_HOME and
a clean environment, so no key on the machine changes what is measured. Peak RSS comes from
GNU time (`apt-get install time`): a child forked from this Python process would report
Python's own RSS as its high-water mark.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


GNU_TIME = "/usr/bin/time"


def run_once(argv, env):
    """Wall time of one run, in ms."""
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {proc.stderr.decode()}")
    return elapsed * 1000.0


def peak_rss_mib(argv, env):
    """Peak RSS of one run, in MiB, as GNU time measures it."""
    proc = subprocess.run([GNU_TIME, "-f", "%M"] + argv, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True)
    return int(proc.stderr.decode().strip().splitlines()[-1]) / 1024.0


def measure(name, argv, env, runs):
    times = [run_once(argv, env) for _ in range(runs)]
    rss = [peak_rss_mib(argv, env) for _ in range(5)]
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    print(f"| {name} | {statistics.median(times):.1f} ms | {p95:.1f} ms | {max(rss):.1f} MiB |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--binary")
    parser.add_argument("--history", type=int, default=200, help="turns already in the session")
    args = parser.parse_args()
    if not os.path.exists(GNU_TIME):
        sys.exit(f"{GNU_TIME} is missing: apt-get install time")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    binary = args.binary
    if binary is None:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "pincer"], cwd=root, check=True)
        binary = os.path.join(root, "target", "release", "pincer")
    with tempfile.TemporaryDirectory() as tmp:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "PINCER_HOME": os.path.join(tmp, "pincer")}
        print(f"binary: {binary} ({os.path.getsize(binary) / 1024 / 1024:.1f} MiB), {args.runs} runs each")
        print("| command | median | p95 | peak RSS |")
        print("|---|---|---|---|")
        measure("pincer --version", [binary, "--version"], env, args.runs)
        measure("pincer ask (stub, new session each run)", [binary, "ask", "--new-session", "hello"], env, args.runs)
        for i in range(args.history):
            run_once([binary, "ask", "--session", "long", f"message {i}"], env)
        measure(f"pincer ask (stub, session of {args.history} turns)",
                [binary, "ask", "--session", "long", "one more"], env, args.runs)


if __name__ == "__main__":
    main()
