// OpenClaw's Control UI in headless Chromium against a running gateway (started by
// control-ui.sh, which passes CUI_URL, CUI_TOKEN, CUI_TARGET, CHROMIUM, CUI_PROFILE,
// CUI_SCREENSHOTS and PLAYWRIGHT_CORE). Prints one line per check and "N passed, M failed";
// exits 1 on failure. Every gateway call the app makes is watched on its WebSocket: one
// that fails (an unknown method, bad params, …) fails the run, and so does an error line on
// the page or in the console.
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`control-ui.test.mjs: ${name} is not set (run interop/control-ui.sh)`);
  return value;
};
const { chromium } = await import(env("PLAYWRIGHT_CORE"));
const url = env("CUI_URL"); // http://127.0.0.1:<port>/control/
const token = env("CUI_TOKEN");
const target = env("CUI_TARGET");
const shots = env("CUI_SCREENSHOTS");
const HELLO = "Hello from the mock, streamed in pieces."; // every reply (control-ui.sh)
// OpenClaw's own gateway takes seconds to start a run (it prepares a workspace first).
const RUN_TIMEOUT = target === "openclaw" ? 90_000 : 30_000;

const context = await chromium.launchPersistentContext(env("CUI_PROFILE"), {
  executablePath: env("CHROMIUM"),
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
context.setDefaultTimeout(30_000);
const page = context.pages()[0] ?? (await context.newPage());

// What went wrong anywhere, checked at the end (and named as it happens).
const consoleErrors = [];
const failedCalls = [];
const failedLoads = [];
const chatFrames = [];
// Runs the app started (chat.send's runId), runs the gateway said ended (a
// `sessions.changed` with phase end), and when the last run or session event came.
const startedRuns = new Set();
const endedRuns = new Set();
let lastRunEventAt = 0;
page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
page.on("pageerror", (e) => consoleErrors.push(String(e)));
page.on("response", (r) => {
  if (r.status() >= 400) failedLoads.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
});
page.on("websocket", (ws) => {
  const methods = new Map();
  ws.on("framesent", (f) => {
    try {
      const frame = JSON.parse(String(f.payload));
      if (frame.type === "req") methods.set(frame.id, frame.method);
    } catch {}
  });
  ws.on("framereceived", (f) => {
    let frame;
    try { frame = JSON.parse(String(f.payload)); } catch { return; }
    if (frame.type === "res" && frame.ok === false) {
      failedCalls.push(`${methods.get(frame.id) ?? frame.id}: ${JSON.stringify(frame.error)}`);
    }
    if (frame.type === "res" && frame.ok && methods.get(frame.id) === "chat.send" && frame.payload?.runId) {
      startedRuns.add(frame.payload.runId);
    }
    if (frame.type === "event" && frame.event === "chat") chatFrames.push(frame.payload);
    if (frame.type === "event" && ["chat", "agent", "sessions.changed", "session.message"].includes(frame.event)) {
      lastRunEventAt = Date.now();
    }
    if (frame.type === "event" && frame.event === "sessions.changed"
      && frame.payload?.phase === "end" && frame.payload?.runId) endedRuns.add(frame.payload.runId);
  });
});

let passed = 0, failed = 0, step = 0;
async function check(name, body) {
  try {
    await body();
    passed++;
    console.log(`control-ui: ${name} ok`);
  } catch (e) {
    failed++;
    console.log(`control-ui: ${name} FAILED: ${e.stack || e}`);
  }
  await page.screenshot({ path: `${shots}-${++step}.png` }).catch(() => {});
}
function assert(cond, message) { if (!cond) throw new Error(message); }

// The app keeps a pane per open session; the one on screen is the active one.
const pane = ".chat-pane-cache__pane--active";
const composer = `${pane} textarea[aria-label='Chat composer']`;
const runStatus = `${pane} .agent-chat__run-status-announcement`;
const bubbles = (role) => page.locator(`${pane} .chat-group.${role} .chat-text`);
const texts = async (role) => (await bubbles(role).allTextContents()).map((t) => t.trim());

async function connected() {
  await page.waitForSelector(composer, { state: "visible" });
  await page.waitForFunction(() => [...document.querySelectorAll(".sidebar-footer-bar .sr-only")]
    .some((e) => e.textContent.trim() === "Connected"));
}
async function send(text) {
  await page.fill(composer, text);
  await page.press(composer, "Enter");
}
// A run has settled: the gateway ended every run the app started and has sent nothing about
// runs for a second, the app says so, the send button is back, the composer takes text.
// (OpenClaw's app says "Done" a moment before its gateway's last run events, and queues a
// message sent in between.)
async function settled() {
  const deadline = Date.now() + RUN_TIMEOUT;
  while ([...startedRuns].some((id) => !endedRuns.has(id)) || Date.now() - lastRunEventAt < 1000) {
    assert(Date.now() < deadline, `runs not ended: ${[...startedRuns].filter((id) => !endedRuns.has(id))}`);
    await page.waitForTimeout(100);
  }
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent.trim() === "Done",
    runStatus, { timeout: RUN_TIMEOUT });
  assert(await page.locator(`${pane} .chat-send-btn--stop`).count() === 0, "no Stop button once the run is over");
  assert(await page.isEditable(composer), "the composer takes text again");
}
// The pane shows `n` replies, all complete.
async function replies(n) {
  await page.waitForFunction(({ pane, n, hello }) => {
    const all = [...document.querySelectorAll(`${pane} .chat-group.assistant .chat-text`)];
    return all.length === n && all.every((e) => e.textContent.trim() === hello);
  }, { pane, n, hello: HELLO }, { timeout: RUN_TIMEOUT });
}
// The pane shows exactly these user messages (waiting for them to appear).
async function userMessages(want) {
  await page.waitForFunction(({ pane, want }) => JSON.stringify(
    [...document.querySelectorAll(`${pane} .chat-group.user .chat-text`)].map((e) => e.textContent.trim()),
  ) === JSON.stringify(want), { pane, want }, { timeout: RUN_TIMEOUT })
    .catch(async (e) => { throw new Error(`user messages ${JSON.stringify(await texts("user"))}, want ${JSON.stringify(want)}: ${e.message}`); });
}

await check("loads the app and connects with the token from the URL fragment", async () => {
  const res = await page.goto(`${url}#token=${encodeURIComponent(token)}`);
  assert(res.status() === 200, `status ${res.status()}`);
  assert(res.headers()["content-type"] === "text/html; charset=utf-8", `content-type ${res.headers()["content-type"]}`);
  await connected();
  const base = await page.evaluate(() => document.documentElement.getAttribute("data-openclaw-control-ui-base-path"));
  assert(base === "/control", `the page knows its mount: ${base}`);
});

await check("sends a message, shows the reply streaming, and the run settles", async () => {
  // Every text the newest assistant bubble shows while it streams.
  await page.evaluate((pane) => {
    window.__seen = [];
    new MutationObserver(() => {
      const all = document.querySelectorAll(`${pane} .chat-group.assistant .chat-text`);
      const text = all.length ? all[all.length - 1].textContent.trim() : "";
      if (text && window.__seen[window.__seen.length - 1] !== text) window.__seen.push(text);
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  }, pane);
  await send("hello browser");
  await userMessages(["hello browser"]);
  await replies(1);
  await settled();
  const seen = await page.evaluate(() => window.__seen);
  const partial = [...new Set(seen.filter((t) => t !== HELLO))];
  assert(partial.length >= 2, `at least two partial texts on the page, saw ${JSON.stringify(seen)}`);
  assert(partial.every((t) => HELLO.startsWith(t)), `partials are prefixes: ${JSON.stringify(partial)}`);
  const deltas = chatFrames.filter((p) => p.state === "delta" && p.sessionKey === "agent:main:main");
  assert(deltas.length >= 2, `streamed as chat deltas: ${deltas.length}`);
  assert(chatFrames.some((p) => p.state === "final" && p.sessionKey === "agent:main:main"), "a final chat event");
  await send("and once more");
  await userMessages(["hello browser", "and once more"]);
  await replies(2);
  await settled();
});

await check("a reload shows the history", async () => {
  await page.reload();
  await connected();
  await userMessages(["hello browser", "and once more"]);
  await replies(2);
});

// The new session's short id (its key's UUID without dashes), the end of its address: the
// app links to `/control/chat/main/<id>`, or `<title-slug>-<id>` once a title is known.
let newId = "";
const isNewSession = (u) => new URL(u).pathname.endsWith(newId);
await check("/new starts a new session", async () => {
  await send("/new");
  await page.waitForURL(/\/control\/chat\/main\/[0-9a-f]{32}$/);
  newId = new URL(page.url()).pathname.split("/").pop();
  await page.waitForSelector(composer, { state: "visible" });
  await userMessages([]);
  await send("second session please");
  await userMessages(["second session please"]);
  await replies(1);
  await settled();
});

await check("switching sessions shows each one's history", async () => {
  assert(/^[0-9a-f]{32}$/.test(newId), `a new session to switch to: ${JSON.stringify(newId)}`);
  await page.click(`a[href="/control/chat/main"]`);
  await page.waitForURL((u) => u.pathname === "/control/chat/main");
  await userMessages(["hello browser", "and once more"]);
  await replies(2);
  await page.locator(`a[href^="/control/chat/main/"][href$="${newId}"]`).first().click();
  await page.waitForURL((u) => isNewSession(u.href));
  await userMessages(["second session please"]);
  await replies(1);
});

await check("a reload on the session's own address shows it again", async () => {
  assert(isNewSession(page.url()), `on the new session's address: ${page.url()}`);
  await page.reload();
  await connected();
  await userMessages(["second session please"]);
  await replies(1);
});

await check("no unknown method or other error, on the page, the socket or the console", async () => {
  const problems = [];
  const text = await page.evaluate(() => document.body.innerText);
  if (/unknown method/i.test(text)) problems.push("\"unknown method\" on the page");
  const alerts = await page.evaluate(() => [...document.querySelectorAll("[role=alert], [class*=toast], [class*=error]")]
    .filter((e) => e.offsetParent !== null && e.textContent.trim())
    .map((e) => `${e.className}: ${e.textContent.trim().replace(/\s+/g, " ").slice(0, 200)}`));
  if (alerts.length) problems.push(`error lines on the page: ${JSON.stringify(alerts, null, 1)}`);
  if (failedCalls.length) problems.push(`failed gateway calls: ${JSON.stringify(failedCalls, null, 1)}`);
  // OpenClaw's own gateway answers its owner-avatar and workspace-icon requests 404 (its
  // console says so): the reference's own failures, not counted against it.
  const known = target === "openclaw"
    ? (l) => /\/api\/users\/[^/]+\/avatar$|\/__openclaw__\/workspace-icon\//.test(l)
    : () => false;
  const loads = failedLoads.filter((l) => !known(l));
  if (loads.length) problems.push(`failed loads: ${JSON.stringify(loads)}`);
  const errors = consoleErrors.filter((e) => !(failedLoads.length && !loads.length && /^Failed to load resource/.test(e)));
  if (errors.length) problems.push(`console errors: ${JSON.stringify(errors, null, 1)}`);
  assert(problems.length === 0, problems.join("\n"));
});

await context.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
