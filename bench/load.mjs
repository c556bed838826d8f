#!/usr/bin/env node
// The load client of bench/peers.py: CLIENTS WebSocket clients speaking OpenClaw's gateway
// protocol (connect with a token, then turns) against any gateway that speaks it, so Pincer and
// OpenClaw get the same client and the same requests. Node >= 22 (its built-in WebSocket), no
// packages.
//
// Each client holds its own session (`agent:main:<label>-<n>`) and runs turns one after another
// until it has run TURNS or SECONDS have passed since every client was connected, whichever
// comes first (the turn in flight then finishes). A turn is `chat.send` and its `chat` event
// with state `final` (or, with --method agent, `agent` and its second response, status `ok`);
// the reply's text must be EXPECT, else the run fails. Every RESET turns a client starts its
// session over (`sessions.reset`, a user's `/new`), so sessions keep a realistic length.
//
//   node bench/load.mjs --url ws://127.0.0.1:P/ --token T --clients 10 --turns 100 \
//     --seconds 30 --expect "tok tok" [--method chat|agent] [--label c10] [--reset 20]
//
// Prints one JSON line: clients, turns, seconds (from all connected to the last final),
// turnsPerSecond, latencyMs {p50, p99}, connectSeconds, and this process's own CPU time over
// the load (cpuMs, cpuShare = CPU time / wall time, 1.0 = one core busy).

const opts = {
  url: "", token: "", clients: 1, turns: 100, seconds: 30, expect: "", method: "chat",
  label: "load", reset: 20, turnTimeout: 120,
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = argv[i].replace(/^--/, "").replace(/-(\w)/g, (_, c) => c.toUpperCase());
  if (!(key in opts) || argv[i + 1] === undefined) fail(`unknown or valueless option ${argv[i]}`);
  opts[key] = typeof opts[key] === "number" ? Number(argv[i + 1]) : argv[i + 1];
}
if (!opts.url || !opts.token || !opts.expect) fail("--url, --token and --expect are required");

function fail(why) {
  process.stderr.write(`load: ${why}\n`);
  process.exit(1);
}

// The text of a chat message: its text parts joined (a string content counts as one part).
function messageText(message) {
  const content = message?.content;
  if (typeof content === "string") return content;
  return (content ?? []).filter((p) => p?.type === "text").map((p) => p.text).join("");
}

// One connection: requests by id, and waiters for a run's `chat` end by runId. Every client may
// see every run's events (broadcasts); only its own runs are looked at.
class Client {
  constructor(n) {
    this.n = n;
    this.nextId = 0;
    this.pending = new Map(); // request id -> {resolve, reject, final}
    this.runs = new Map(); // runId -> {resolve, reject}
  }

  open() {
    return new Promise((resolve, reject) => {
      this.ws = new WebSocket(opts.url);
      this.ws.onerror = (e) => reject(new Error(`client ${this.n}: ${e.message ?? "socket error"}`));
      this.ws.onclose = (e) => this.abort(new Error(`client ${this.n}: closed (${e.code} ${e.reason})`));
      this.ws.onmessage = (e) => this.frame(JSON.parse(e.data), resolve);
    });
  }

  frame(f, challenged) {
    if (f.type === "event") {
      if (f.event === "connect.challenge") challenged();
      if (f.event !== "chat") return;
      const run = this.runs.get(f.payload?.runId);
      const state = f.payload?.state;
      if (!run || !["final", "error", "aborted"].includes(state)) return;
      this.runs.delete(f.payload.runId);
      if (state === "final") run.resolve(messageText(f.payload.message));
      else run.reject(new Error(`run ${f.payload.runId}: ${state} ${f.payload.errorMessage ?? ""}`));
    } else if (f.type === "res") {
      const req = this.pending.get(f.id);
      if (!req) return;
      if (!f.ok) {
        this.pending.delete(f.id);
        req.reject(new Error(`${req.method} failed: ${JSON.stringify(f.error)}`));
      } else if (!(req.final && f.payload?.status === "accepted")) {
        this.pending.delete(f.id);
        req.resolve(f.payload);
      }
    }
  }

  abort(err) {
    for (const r of [...this.pending.values(), ...this.runs.values()]) r.reject(err);
    this.pending.clear();
    this.runs.clear();
  }

  request(method, params, final = false) {
    const id = `${this.n}:${++this.nextId}`;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, final, method });
      this.ws.send(JSON.stringify({ type: "req", id, method, params }));
    });
  }

  // Resolves with the text of run `runId`'s final (registered before the run is started).
  final(runId) {
    return new Promise((resolve, reject) => this.runs.set(runId, { resolve, reject }));
  }

  async connect() {
    await this.open(); // the server's connect.challenge came
    await this.request("connect", {
      minProtocol: 4, maxProtocol: 4,
      client: { id: "cli", version: "bench", platform: "linux", mode: "cli" },
      caps: [], auth: { token: opts.token }, role: "operator",
      // `sessions.reset` (every RESET turns) needs admin on OpenClaw's gateway.
      scopes: ["operator.read", "operator.write", "operator.admin"],
    });
  }

  async turn(sessionKey, key) {
    const message = `turn ${key}`;
    let text;
    if (opts.method === "agent") {
      const res = await this.request("agent", { message, sessionKey, idempotencyKey: key }, true);
      if (res.status !== "ok") throw new Error(`agent ${key}: status ${res.status}`);
      text = (res.result?.payloads ?? []).map((p) => p.text ?? "").join("");
    } else {
      const final = this.final(key);
      await this.request("chat.send", { sessionKey, message, idempotencyKey: key });
      text = await final;
    }
    if (text.trim() !== opts.expect.trim()) {
      throw new Error(`turn ${key}: reply ${JSON.stringify(text)}, expected ${JSON.stringify(opts.expect)}`);
    }
  }
}

function withTimeout(promise, seconds, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${seconds} s`)), seconds * 1000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

async function main() {
  const clients = Array.from({ length: opts.clients }, (_, n) => new Client(n));
  const connectStart = performance.now();
  // At most 8 handshakes at a time: Pincer keeps 16 not-yet-connected sockets per address.
  let next = 0;
  const opener = async () => {
    while (next < clients.length) {
      const c = clients[next++];
      await withTimeout(c.connect(), opts.turnTimeout, `connect of client ${c.n}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(8, clients.length) }, opener));
  const connectSeconds = (performance.now() - connectStart) / 1000;

  const start = performance.now();
  const deadline = start + opts.seconds * 1000;
  const cpuStart = process.cpuUsage();
  const latencies = [];
  const run = async (c) => {
    const sessionKey = `agent:main:${opts.label}-${c.n}`;
    for (let i = 0; i < opts.turns && performance.now() < deadline; i++) {
      if (i > 0 && i % opts.reset === 0) {
        await withTimeout(c.request("sessions.reset", { key: sessionKey }), opts.turnTimeout, "reset");
      }
      const key = `${opts.label}-${c.n}-${i}-${process.pid}`;
      const t0 = performance.now();
      await withTimeout(c.turn(sessionKey, key), opts.turnTimeout, `turn ${key}`);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(clients.map(run));
  const wall = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  for (const c of clients) {
    c.ws.onclose = null;
    c.ws.close();
  }
  latencies.sort((a, b) => a - b);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
  console.log(JSON.stringify({
    clients: opts.clients, method: opts.method, turns: latencies.length,
    seconds: round(wall / 1000, 3), turnsPerSecond: round(latencies.length / (wall / 1000), 2),
    latencyMs: { p50: round(percentile(latencies, 50), 2), p99: round(percentile(latencies, 99), 2) },
    connectSeconds: round(connectSeconds, 3), cpuMs: round(cpuMs), cpuShare: round(cpuMs / wall, 3),
  }));
}

main().then(() => process.exit(0), (e) => fail(e.message));
