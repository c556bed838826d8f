#!/usr/bin/env python3
"""Scale numbers of `pincer gateway` (release build, `pincer-mock-llm` in instant mode):

- 10,000 sessions on disk (pi JSONL v3 transcripts of 3 turns each, plus the index
  `sessions.json`, in the layout crates/store documents): gateway start (exec to the first
  `/readyz` 200, median of 5) and RSS 5 s after ready, beside an empty home; the bytes the
  gateway read during start-up (`/proc/PID/io` rchar: it must not read every transcript);
- `sessions.list` latency (p50/p99 of 50 calls, default page of 50 and a page of 1,000);
- resuming a session nobody touched since start: `chat.history` of it (p50/p99 over 20
  sessions) and the first turn on it (`agent` request to its final response, p50/p99 over
  20 sessions), beside a turn on a new session;
- RSS with 1,000 idle authenticated WebSocket connections (opened one after another, each
  completing `connect`: the gateway keeps at most 16 connections per address that have not;
  they read and drop what they are sent, as a real idle client does).

Every answer is checked (history texts, reply texts, session counts). The WebSocket client is
Python's standard library (its own time is in the latencies; ~0.1 ms a call).

    python3 bench/scale.py [--sessions 10000] [--idle 1000] [--target-dir DIR] [--no-build]

Prints a Markdown table and one JSON line.
"""
import argparse
import base64
import json
import os
import selectors
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gateway import TOKEN, free_port, mock_config, rss_mib, start_gateway, stop  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLY = "tok tok tok tok tok tok tok tok "
TURNS_PER_SESSION = 3


class Ws:
    """A minimal WebSocket client (RFC 6455, text frames, client masking)."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise SystemExit("the gateway closed the WebSocket handshake")
            head += chunk
        status, _, self.buf = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n")[0]:
            raise SystemExit(f"no WebSocket upgrade: {status[:200]!r}")
        self.next_id = 0

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise SystemExit("the gateway closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, frame):
        data = json.dumps(frame).encode()
        mask = os.urandom(4)
        n = len(data)
        if n < 126:
            header = struct.pack("!BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x81, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(header + mask + masked)

    def recv(self):
        """The next text message (pings are answered, other control frames skipped)."""
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise SystemExit("the gateway closed the WebSocket")
            if opcode == 0x9:
                mask = os.urandom(4)
                self.sock.sendall(struct.pack("!BB", 0x8A, 0x80 | len(payload)) + mask
                                  + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                continue
            if opcode in (0x1, 0x0):
                message += payload
                if b0 & 0x80:
                    return json.loads(message)

    def request(self, method, params, final=False):
        """Sends a request and returns its response's payload (for `agent`, the final one)."""
        self.next_id += 1
        rid = f"r{self.next_id}"
        self.send({"type": "req", "id": rid, "method": method, "params": params})
        while True:
            msg = self.recv()
            if msg.get("type") != "res" or msg.get("id") != rid:
                continue
            if not msg.get("ok"):
                raise SystemExit(f"{method} failed: {msg.get('error')}")
            payload = msg.get("payload") or {}
            if final and payload.get("status") == "accepted":
                continue
            return payload

    def connect(self):
        self.send({"type": "req", "id": "c", "method": "connect", "params": {
            "minProtocol": 4, "maxProtocol": 4, "client": {"id": "test", "mode": "test"},
            "auth": {"token": TOKEN}, "role": "operator", "scopes": ["operator.write"]}})
        while True:
            msg = self.recv()
            if msg.get("type") == "res" and msg.get("id") == "c":
                if not msg.get("ok"):
                    raise SystemExit(f"connect failed: {msg.get('error')}")
                return self

    def close(self):
        self.sock.close()


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + ".%03dZ" % (ms % 1000)


def write_sessions(home, count):
    """`count` sessions `agent:main:s{i}` of TURNS_PER_SESSION turns each, as the store
    writes them; returns their keys, oldest first, and the transcripts' total size."""
    sessions = os.path.join(home, "agents", "main", "sessions")
    os.makedirs(sessions, mode=0o700)
    index = {}
    keys = []
    total = 0
    base = int(time.time() * 1000) - count * 60_000
    for i in range(count):
        key = f"agent:main:s{i}"
        sid = str(uuid.uuid4())
        t = base + i * 60_000
        lines = [{"type": "session", "version": 3, "id": sid, "timestamp": iso(t), "cwd": home,
                  "sessionKey": key},
                 {"type": "model_change", "id": "m0000000", "parentId": None, "timestamp": iso(t),
                  "provider": "mock", "modelId": "m"},
                 {"type": "thinking_level_change", "id": "t0000000", "parentId": "m0000000",
                  "timestamp": iso(t), "thinkingLevel": "off"}]
        parent = "t0000000"
        for turn in range(TURNS_PER_SESSION):
            at = t + turn * 1000
            uid, aid = f"u{turn:07d}", f"a{turn:07d}"
            lines.append({"type": "message", "id": uid, "parentId": parent, "timestamp": iso(at),
                          "message": {"role": "user", "content": f"question {turn} of session {i}",
                                      "timestamp": at}})
            lines.append({"type": "message", "id": aid, "parentId": uid, "timestamp": iso(at + 5),
                          "message": {"role": "assistant", "content": [{"type": "text", "text": REPLY}],
                                      "api": "openai-completions", "provider": "mock", "model": "m",
                                      "usage": {"input": 8, "output": 8, "cacheRead": 0, "cacheWrite": 0,
                                                "totalTokens": 16,
                                                "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0,
                                                         "cacheWrite": 0.0, "total": 0.0}},
                                      "stopReason": "stop", "timestamp": at + 4,
                                      "responseId": "chatcmpl-mock-1"}})
            parent = aid
        text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
        total += len(text)
        with open(os.path.join(sessions, f"{sid}.jsonl"), "w") as f:
            f.write(text)
        index[key] = {"sessionId": sid, "createdAt": t, "updatedAt": t + TURNS_PER_SESSION * 1000,
                      "inputTokens": 8 * TURNS_PER_SESSION, "outputTokens": 8 * TURNS_PER_SESSION,
                      "totalTokens": 16 * TURNS_PER_SESSION, "compactionCount": 0}
        keys.append(key)
    with open(os.path.join(sessions, "sessions.json"), "w") as f:
        json.dump(index, f, indent=2)
    return keys, total


def drain(reader, seconds):
    """Reads and drops whatever the idle connections were sent, for `seconds`."""
    end = time.perf_counter() + seconds
    while True:
        for key, _ in reader.select(timeout=max(0.0, min(0.2, end - time.perf_counter()))):
            try:
                key.fileobj.recv(1 << 20)
            except BlockingIOError:
                pass
        if time.perf_counter() >= end:
            return


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, round(p / 100 * (len(s) - 1)))]


def timed(f):
    start = time.perf_counter()
    out = f()
    return (time.perf_counter() - start) * 1000.0, out


def rchar(pid):
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
    return 0


def measure_start(binary, env, starts=5):
    """Median start-up, then a gateway left running: (ms, proc, port, rchar at ready)."""
    times = []
    for _ in range(starts):
        port = free_port()
        proc, ms = start_gateway(binary, env, port)
        times.append(ms)
        stop(proc)
    port = free_port()
    proc, _ = start_gateway(binary, env, port)
    return statistics.median(times), proc, port, rchar(proc.pid)


def check_history(payload, key, turns, extra=()):
    messages = payload.get("messages") or []
    texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
             for m in messages]
    i = int(key.rsplit("s", 1)[1])
    want = []
    for turn in range(turns):
        want += [f"question {turn} of session {i}", REPLY]
    want += list(extra)
    if texts != want:
        raise SystemExit(f"chat.history of {key}: {texts!r}")


def reply_text(payload):
    for item in (payload.get("result") or {}).get("payloads") or []:
        if item.get("text"):
            return item["text"]
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10000)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--target-dir", default=os.path.join(ROOT, "target"))
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "pincer", "-p", "pincer-testkit",
                        "--target-dir", args.target_dir], cwd=ROOT, check=True)
    target = os.path.join(args.target_dir, "release")
    pincer = os.path.join(target, "pincer")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        scenario = os.path.join(tmp, "scenario.json")
        with open(scenario, "w") as f:
            json.dump({"instant": {"tokens": 8}}, f)
        mock = subprocess.Popen([os.path.join(target, "pincer-mock-llm"), "--scenario", scenario],
                                stdout=subprocess.PIPE, text=True)
        try:
            mock_url = mock.stdout.readline().strip().split()[-1]
            config = mock_config(mock_url)
            homes = {}
            for name in ("empty", "full"):
                home = os.path.join(tmp, name)
                os.makedirs(home, mode=0o700)
                with open(os.path.join(home, "pincer.json5"), "w") as f:
                    f.write(config)
                homes[name] = home
            t0 = time.perf_counter()
            keys, transcript_bytes = write_sessions(homes["full"], args.sessions)
            out["writeSessionsS"] = round(time.perf_counter() - t0, 2)
            out["sessions"] = args.sessions
            out["transcriptBytes"] = transcript_bytes

            def env_of(home):
                return {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "PINCER_HOME": home,
                        "PINCER_GATEWAY_TOKEN": TOKEN}

            # The empty home, for comparison.
            ms, proc, _, read = measure_start(pincer, env_of(homes["empty"]))
            time.sleep(5)
            out["empty"] = {"startMs": round(ms, 1), "rssMiB": round(rss_mib(proc.pid), 1),
                            "startReadBytes": read}
            stop(proc)

            ms, proc, port, read = measure_start(pincer, env_of(homes["full"]))
            try:
                time.sleep(5)
                out["full"] = {"startMs": round(ms, 1), "rssMiB": round(rss_mib(proc.pid), 1),
                               "startReadBytes": read}
                ws = Ws(port).connect()
                # Resume: sessions untouched since this gateway started.
                cold = keys[: args.sessions // 2: max(1, args.sessions // 40)][:20]
                history = []
                for key in cold:
                    ms, payload = timed(lambda: ws.request("chat.history", {"sessionKey": key}))
                    check_history(payload, key, TURNS_PER_SESSION)
                    history.append(ms)
                turn_keys = keys[args.sessions // 2:][:: max(1, args.sessions // 40)][:20]
                turns = []
                for n, key in enumerate(turn_keys):
                    ms, payload = timed(lambda: ws.request("agent", {
                        "message": "resume", "sessionKey": key,
                        "idempotencyKey": f"scale-{n}-{os.getpid()}"}, final=True))
                    if reply_text(payload) != REPLY:
                        raise SystemExit(f"turn on {key}: {json.dumps(payload)[:400]}")
                    turns.append(ms)
                check_history(ws.request("chat.history", {"sessionKey": turn_keys[0]}), turn_keys[0],
                              TURNS_PER_SESSION, ("resume", REPLY))
                fresh = []
                for n in range(20):
                    ms, payload = timed(lambda: ws.request("agent", {
                        "message": "hello", "sessionKey": f"agent:main:new-{n}",
                        "idempotencyKey": f"scale-new-{n}-{os.getpid()}"}, final=True))
                    if reply_text(payload) != REPLY:
                        raise SystemExit(f"turn on a new session: {json.dumps(payload)[:400]}")
                    fresh.append(ms)
                out["chatHistoryColdMs"] = {"p50": round(pct(history, 50), 2), "p99": round(pct(history, 99), 2)}
                out["resumeTurnMs"] = {"p50": round(pct(turns, 50), 2), "p99": round(pct(turns, 99), 2)}
                out["newSessionTurnMs"] = {"p50": round(pct(fresh, 50), 2), "p99": round(pct(fresh, 99), 2)}
                total = args.sessions + 20
                for limit, name in ((None, "sessionsListMs"), (1000, "sessionsList1000Ms")):
                    params = {} if limit is None else {"limit": limit}
                    times = []
                    for _ in range(50):
                        ms, payload = timed(lambda: ws.request("sessions.list", params))
                        want = min(total, limit or 50)
                        if payload.get("totalCount") != total or payload.get("count") != want:
                            raise SystemExit(f"sessions.list: total {payload.get('totalCount')}, "
                                             f"count {payload.get('count')}; wanted {total}, {want}")
                        times.append(ms)
                    out[name] = {"p50": round(pct(times, 50), 2), "p99": round(pct(times, 99), 2)}
                ws.close()
                time.sleep(2)
                before = rss_mib(proc.pid)
                idle = []
                reader = selectors.DefaultSelector()
                t0 = time.perf_counter()
                for _ in range(args.idle):
                    conn = Ws(port).connect()
                    conn.sock.setblocking(False)
                    reader.register(conn.sock, selectors.EVENT_READ)
                    idle.append(conn)
                    # Idle clients still read what the gateway sends them (presence events
                    # on every join): unread frames would be queued in the gateway.
                    drain(reader, 0)
                opened = time.perf_counter() - t0
                drain(reader, 5)
                with_idle = rss_mib(proc.pid)
                for conn in idle:
                    reader.unregister(conn.sock)
                    conn.sock.setblocking(True)
                # They are all still served.
                probe = idle[-1].request("sessions.list", {"limit": 1})
                if probe.get("totalCount") != total:
                    raise SystemExit(f"sessions.list on an idle connection: {probe}")
                out["idle"] = {"connections": len(idle), "openS": round(opened, 2),
                               "rssBeforeMiB": round(before, 1), "rssMiB": round(with_idle, 1),
                               "perConnectionKiB": round((with_idle - before) * 1024 / max(1, len(idle)), 1)}
                for ws in idle:
                    ws.close()
                out["peakRssMiB"] = round(rss_mib(proc.pid, "VmHWM"), 1)
            finally:
                stop(proc)
        finally:
            mock.terminate()
            mock.wait()
    e, f = out["empty"], out["full"]
    rows = [
        ("gateway start, exec → /readyz 200 (median of 5)", f"{e['startMs']} ms", f"{f['startMs']} ms"),
        ("RSS 5 s after ready", f"{e['rssMiB']} MiB", f"{f['rssMiB']} MiB"),
        ("bytes read before ready", f"{e['startReadBytes']:,}", f"{f['startReadBytes']:,} "
         f"(transcripts: {transcript_bytes:,})"),
        ("`chat.history` of an untouched session (p50 / p99)", "",
         f"{out['chatHistoryColdMs']['p50']} / {out['chatHistoryColdMs']['p99']} ms"),
        ("first turn on an untouched session (p50 / p99)", "",
         f"{out['resumeTurnMs']['p50']} / {out['resumeTurnMs']['p99']} ms"),
        ("turn on a new session (p50 / p99)", "",
         f"{out['newSessionTurnMs']['p50']} / {out['newSessionTurnMs']['p99']} ms"),
        ("`sessions.list`, page of 50 (p50 / p99 of 50)", "",
         f"{out['sessionsListMs']['p50']} / {out['sessionsListMs']['p99']} ms"),
        ("`sessions.list`, page of 1,000 (p50 / p99 of 50)", "",
         f"{out['sessionsList1000Ms']['p50']} / {out['sessionsList1000Ms']['p99']} ms"),
        (f"RSS with {out['idle']['connections']:,} idle authenticated WebSockets", "",
         f"{out['idle']['rssMiB']} MiB (from {out['idle']['rssBeforeMiB']}; "
         f"{out['idle']['perConnectionKiB']} KiB each)"),
    ]
    print(f"| figure | empty home | {args.sessions:,} sessions |\n|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
