// The web chat page in headless Chromium against a running gateway (started by webchat.sh,
// which passes WEBCHAT_URL, WEBCHAT_TOKEN, CHROMIUM, WEBCHAT_PROFILE, WEBCHAT_SCREENSHOT and
// PLAYWRIGHT_CORE). Prints one line per check and "N passed, M failed"; exits 1 on failure.
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`webchat.test.mjs: ${name} is not set (run interop/webchat.sh)`);
  return value;
};
const { chromium } = await import(env("PLAYWRIGHT_CORE"));
const url = env("WEBCHAT_URL");
const token = env("WEBCHAT_TOKEN");
const HELLO = "Hello from the mock, streamed in pieces.";
const SLOW = "This reply is long and slow, so there is time to press Abort before it ends.";

const context = await chromium.launchPersistentContext(env("WEBCHAT_PROFILE"), {
  executablePath: env("CHROMIUM"),
  headless: true,
  viewport: { width: 1100, height: 700 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
context.setDefaultTimeout(15_000);
const page = context.pages()[0] ?? (await context.newPage());
const consoleErrors = [];
page.on("console", (m) => { if (m.type() === "error") consoleErrors.push(m.text()); });
page.on("pageerror", (e) => consoleErrors.push(String(e)));

let passed = 0, failed = 0;
async function check(name, body) {
  try {
    await body();
    passed++;
    console.log(`webchat: ${name} ok`);
  } catch (e) {
    failed++;
    console.log(`webchat: ${name} FAILED: ${e.stack || e}`);
  }
}
function assert(cond, message) { if (!cond) throw new Error(message); }
const lastAssistant = () => page.locator(".msg.assistant").last();
async function sendMessage(text) {
  await page.fill("#input", text);
  await page.click("#send");
}
const connected = () => page.waitForSelector('#status[data-state="connected"]');

await check("serves the page and connects with the token from the URL fragment", async () => {
  const res = await page.goto(`${url}#token=${encodeURIComponent(token)}`);
  const headers = res.headers();
  assert(headers["content-type"] === "text/html; charset=utf-8", `content-type ${headers["content-type"]}`);
  assert(headers["cache-control"] === "no-store", "Cache-Control: no-store");
  assert(/script-src 'unsafe-inline'/.test(headers["content-security-policy"] || ""), "a CSP");
  await connected();
  assert((await page.textContent("#status")) === "connected", "the status says connected");
  assert(!(await page.evaluate(() => location.hash)), "the token is dropped from the address bar");
  await page.waitForFunction(() => document.getElementById("session-key").textContent === "agent:main:main");
});

await check("streams the reply into the assistant bubble", async () => {
  // Record every text the newest assistant bubble shows while it streams.
  await page.evaluate(() => {
    window.__seen = [];
    new MutationObserver(() => {
      const all = document.querySelectorAll(".msg.assistant .text");
      const text = all.length ? all[all.length - 1].textContent : "";
      if (text && window.__seen[window.__seen.length - 1] !== text) window.__seen.push(text);
    }).observe(document.getElementById("messages"), { childList: true, subtree: true, characterData: true });
  });
  await sendMessage("hello browser");
  await page.waitForSelector('.msg.user:has-text("hello browser")');
  await page.waitForFunction(
    (hello) => {
      const all = document.querySelectorAll(".msg.assistant");
      const b = all[all.length - 1];
      return b && b.dataset.state === "final" && b.querySelector(".text").textContent === hello;
    }, HELLO);
  const seen = await page.evaluate(() => window.__seen);
  const partial = [...new Set(seen.filter((t) => t !== HELLO))];
  assert(partial.length >= 2, `at least two partial texts, saw ${JSON.stringify(seen)}`);
  assert(partial.every((t) => HELLO.startsWith(t)), `partials are prefixes: ${JSON.stringify(partial)}`);
  assert(await page.isHidden("#abort"), "Abort is hidden once the run is over");
});

await check("shows model output as text, never as HTML", async () => {
  const evil = `<img src=x onerror="window.__xss=1"><b>bold</b>`;
  await sendMessage(evil);
  await page.waitForFunction(
    (want) => {
      const all = document.querySelectorAll(".msg.assistant");
      const b = all[all.length - 1];
      return b && b.dataset.state === "final" && b.querySelector(".text").textContent === want;
    }, `mock: ${evil}`);
  assert((await page.locator("#messages img, #messages b").count()) === 0, "no element from the text");
  assert(!(await page.evaluate(() => window.__xss)), "no script ran");
});

await check("shows tool calls compactly", async () => {
  await sendMessage("use a tool please");
  await page.waitForSelector('.msg.assistant[data-state="final"]:has-text("I read it.")');
  const tool = lastAssistant().locator(".tool");
  assert((await tool.count()) >= 1, "a tool line in the reply");
  const line = await tool.first().textContent();
  assert(/^⚙ read [✓✗]/.test(line), `the tool line: ${JSON.stringify(line)}`);
});

await check("Abort stops a running reply and marks it aborted", async () => {
  await sendMessage("slow please");
  await page.waitForSelector("#abort:visible");
  await page.waitForFunction(() => {
    const all = document.querySelectorAll(".msg.assistant");
    return all[all.length - 1]?.querySelector(".text").textContent.length >= 6;
  });
  await page.click("#abort");
  await page.waitForSelector('.msg.assistant[data-state="aborted"]');
  const bubble = lastAssistant();
  assert((await bubble.getAttribute("data-state")) === "aborted", "the last bubble is the aborted one");
  assert((await bubble.locator(".tag").textContent()) === "aborted", "it says aborted");
  const text = await bubble.locator(".text").textContent();
  assert(text.length > 0 && text.length < SLOW.length, `a partial reply is kept: ${JSON.stringify(text)}`);
  await page.waitForSelector("#abort", { state: "hidden" });
});

await check("lists sessions and reloads the history (token remembered)", async () => {
  await page.waitForSelector('#sessions li[data-key="agent:main:main"]');
  await page.reload();
  await connected();
  await page.waitForSelector('.msg.user:has-text("hello browser")');
  await page.waitForFunction((hello) => [...document.querySelectorAll(".msg.assistant .text")]
    .some((t) => t.textContent === hello), HELLO);
  assert((await page.locator('.msg.user').count()) === 4, "four user messages in the history");
  assert((await page.locator('#messages .tool:has-text("read")').count()) >= 1, "the tool call in the history");
  assert((await page.locator('.msg.assistant[data-state="aborted"]').count()) === 1, "the aborted reply is marked");
});

await check("/new starts the session over (the gateway resets it, same key)", async () => {
  await sendMessage("/new");
  await page.waitForSelector('.msg.assistant[data-state="final"]:has-text("New session started. sessionId=")');
  assert((await page.locator(".msg.user").count()) === 0, "the old history is gone from view");
  assert((await page.textContent("#session-key")) === "agent:main:main", "the same session key");
  assert((await page.textContent("#notice")).includes("new session"), "the page says so");
  await sendMessage("first in new");
  await page.waitForSelector('.msg.assistant[data-state="final"]:has-text("mock: first in new")');
});

await check("after a reload the page shows the new session's history only", async () => {
  await page.reload();
  await connected();
  await page.waitForSelector('.msg.user:has-text("first in new")');
  assert((await page.locator(".msg.user").count()) === 1, "only the new session's message");
  await page.waitForSelector('#sessions li[data-key="agent:main:main"].current');
  await page.screenshot({ path: env("WEBCHAT_SCREENSHOT") });
});

// The smallest PNG: one transparent pixel.
const PIXEL = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64");
const mockUrl = env("WEBCHAT_MOCK_URL");
// The image parts of the user messages of the mock's last request.
// An earlier reply in the page matches the waits for a final reply before the new one has
// arrived (a slow worker): wait (bounded, 10 s) until the last request carries `count`
// pictures, then return what it carries.
async function lastRequestImagesOnce(count) {
  let images = await lastRequestImages();
  for (let i = 0; i < 100 && images.length !== count; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    images = await lastRequestImages();
  }
  return images;
}

async function lastRequestImages() {
  const requests = await (await fetch(`${mockUrl}/__mock/requests`)).json();
  const messages = requests[requests.length - 1].body.messages;
  return messages.filter((m) => m.role === "user" && Array.isArray(m.content))
    .flatMap((m) => m.content.filter((c) => c.type === "image_url").map((c) => c.image_url.url));
}

await check("attaches a picture by the button: thumbnail, sent to the model, kept in the history", async () => {
  await page.setInputFiles("#files", { name: "pixel.png", mimeType: "image/png", buffer: PIXEL });
  await page.waitForSelector('#pending .chip:has-text("pixel.png") img');
  await sendMessage("what is in this picture");
  await page.waitForSelector('.msg.user:has-text("what is in this picture") img.thumb');
  await page.waitForSelector('.msg.assistant[data-state="final"]:has-text("mock: ")');
  assert((await page.locator("#pending .chip").count()) === 0, "the pending list is emptied");
  const images = await lastRequestImagesOnce(1);
  assert(images.length === 1 && images[0] === `data:image/png;base64,${PIXEL.toString("base64")}`,
    `the model got the picture: ${JSON.stringify(images).slice(0, 200)}`);
  await page.reload();
  await connected();
  await page.waitForSelector('.msg.user:has-text("what is in this picture") img.thumb');
  const src = await page.getAttribute('.msg.user:has-text("what is in this picture") img.thumb', "src");
  assert(src === `data:image/png;base64,${PIXEL.toString("base64")}`, "the history shows the same picture");
});

await check("a pasted and a dropped file are attached too", async () => {
  const b64 = PIXEL.toString("base64");
  await page.evaluate((b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const files = (name, type) => {
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], name, { type }));
      return dt;
    };
    document.getElementById("input").dispatchEvent(
      new ClipboardEvent("paste", { clipboardData: files("pasted.png", "image/png"), bubbles: true, cancelable: true }));
    document.dispatchEvent(new DragEvent("drop", { dataTransfer: files("notes.txt", "text/plain"), bubbles: true, cancelable: true }));
  }, b64);
  await page.waitForSelector('#pending .chip:has-text("pasted.png") img');
  await page.waitForSelector('#pending .chip:has-text("notes.txt")');
  await page.click('#pending .chip:has-text("notes.txt") button');
  assert((await page.locator("#pending .chip").count()) === 1, "× removes a file before it is sent");
  await sendMessage("and this one");
  await page.waitForSelector('.msg.user:has-text("and this one") img.thumb');
  await page.waitForSelector('.msg.assistant[data-state="final"]:has-text("mock: ")');
  const images = await lastRequestImagesOnce(2);
  assert(images.length === 2, `both pictures of the session reach the model: ${images.length}`);
});

await check("files the agent sends show as a picture and a download, never from outside", async () => {
  await sendMessage("send me the files");
  const bubble = '.msg.assistant[data-state="final"]:has-text("Here they are.")';
  await page.waitForSelector(`${bubble} img.thumb`);
  await page.waitForSelector(`${bubble} a.file[download="notes.txt"]`);
  await page.waitForSelector(`${bubble} .file:has-text("outside the agent's workspace")`);
  const text = await page.textContent(`${bubble} .text`);
  assert(text === "Here they are.", `the MEDIA lines are not shown as text: ${JSON.stringify(text)}`);
  const src = await page.getAttribute(`${bubble} img.thumb`, "src");
  assert(src === `data:image/png;base64,${PIXEL.toString("base64")}`, "the picture is the workspace file");
  const href = await page.getAttribute(`${bubble} a.file`, "href");
  assert(href === `data:text/plain;base64,${Buffer.from("the notes\n").toString("base64")}`, `the download: ${href}`);
  // The same after a reload, from the history.
  await page.reload();
  await connected();
  await page.waitForSelector(`${bubble} img.thumb`);
  await page.waitForSelector(`${bubble} a.file[download="notes.txt"]`);
});

await check("no console errors or CSP violations", async () => {
  assert(consoleErrors.length === 0, `console errors: ${JSON.stringify(consoleErrors)}`);
});

await check("a wrong token shows the error and disables sending", async () => {
  const other = await context.newPage();
  await other.goto(`${url}#token=wrong`);
  await other.waitForSelector('#status[data-state="error"]');
  const error = await other.textContent("#error");
  assert(/refused/i.test(error), `an error is shown: ${JSON.stringify(error)}`);
  assert(await other.isDisabled("#input"), "the input is disabled");
  await other.close();
});

await context.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
