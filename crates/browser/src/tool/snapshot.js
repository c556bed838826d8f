// The snapshot script (pincer-browser's own, run by Runtime.evaluate; not the user's
// `evaluate`). It walks the DOM, gives interactive, heading and landmark elements a
// `data-pincer-ref="e<n>"` attribute that stays on the element (so a later call, from
// another process too, finds it again; elements keep their ref across snapshots), and
// returns an accessibility-style outline bounded by maxChars.
(maxChars) => {
  const MAX_NODES = 5000;
  const NAME_MAX = 100;
  const TEXT_MAX = 300;
  const LANDMARKS = {NAV: "navigation", MAIN: "main", HEADER: "banner", FOOTER: "contentinfo",
    ASIDE: "complementary", FORM: "form", DIALOG: "dialog"};
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "SVG"]);
  const LEAF = new Set(["link", "button", "heading", "textbox", "searchbox", "checkbox", "radio",
    "spinbutton", "slider", "img", "option", "menuitem", "tab", "switch"]);
  const squash = (s) => (s || "").replace(/\s+/g, " ").trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  const quote = (s) => JSON.stringify(s);

  // Refs already in the page keep their numbers; a ref on more than one element (copied
  // by the page's own script, or planted) is taken off all of them, which get new ones.
  let next = 1;
  const counts = new Map();
  const marked = Array.from(document.querySelectorAll("[data-pincer-ref]"));
  for (const el of marked) {
    const ref = el.getAttribute("data-pincer-ref");
    counts.set(ref, (counts.get(ref) || 0) + 1);
    const n = parseInt(ref.slice(1), 10);
    if (n >= next) next = n + 1;
  }
  for (const el of marked) {
    if (counts.get(el.getAttribute("data-pincer-ref")) > 1) el.removeAttribute("data-pincer-ref");
  }

  const visible = (el) => {
    if (el.hidden || el.getAttribute("aria-hidden") === "true") return false;
    const style = getComputedStyle(el);
    return style.display !== "none" && style.visibility !== "hidden";
  };

  const role = (el) => {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit.split(/\s+/)[0];
    const tag = el.tagName;
    if (tag === "A" && el.hasAttribute("href")) return "link";
    if (tag === "BUTTON") return "button";
    if (tag === "INPUT") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      if (type === "hidden") return null;
      if (["button", "submit", "reset", "image"].includes(type)) return "button";
      if (type === "checkbox") return "checkbox";
      if (type === "radio") return "radio";
      if (type === "number") return "spinbutton";
      if (type === "range") return "slider";
      if (type === "search") return "searchbox";
      return "textbox";
    }
    if (tag === "TEXTAREA") return "textbox";
    if (tag === "SELECT") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (/^H[1-6]$/.test(tag)) return "heading";
    if (tag === "IMG") return el.getAttribute("alt") ? "img" : null;
    if (LANDMARKS[tag]) return LANDMARKS[tag];
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) return "textbox";
    if (el.hasAttribute("onclick")) return "clickable";
    return null;
  };

  const textOf = (el) => {
    let out = "";
    for (const child of el.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) out += " " + child.textContent;
      else if (child.nodeType === Node.ELEMENT_NODE) {
        if (child.tagName === "IMG") out += " " + (child.getAttribute("alt") || "");
        else if (!SKIP.has(child.tagName.toUpperCase()) && visible(child)) out += " " + textOf(child);
      }
    }
    return squash(out);
  };

  const byIds = (ids) => squash(ids.split(/\s+/).map((id) => {
    const target = document.getElementById(id);
    return target ? textOf(target) : "";
  }).join(" "));

  const labelOf = (el) => {
    if (el.id) {
      const label = document.querySelector(`label[for="${CSS.escape(el.id)}"]`);
      if (label) return textOf(label);
    }
    const wrapping = el.closest("label");
    return wrapping ? textOf(wrapping) : "";
  };

  const nameOf = (el, r) => {
    const aria = squash(el.getAttribute("aria-label"));
    if (aria) return aria;
    const labelledby = el.getAttribute("aria-labelledby");
    if (labelledby) {
      const named = byIds(labelledby);
      if (named) return named;
    }
    const tag = el.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") {
      const type = (el.getAttribute("type") || "").toLowerCase();
      if (tag === "INPUT" && ["button", "submit", "reset"].includes(type)) {
        return squash(el.value) || (type === "submit" ? "Submit" : type === "reset" ? "Reset" : "");
      }
      if (tag === "INPUT" && type === "image") return squash(el.getAttribute("alt"));
      return labelOf(el) || squash(el.getAttribute("placeholder")) || squash(el.getAttribute("title"));
    }
    if (tag === "IMG") return squash(el.getAttribute("alt"));
    if (LEAF.has(r) || r === "clickable") return textOf(el) || squash(el.getAttribute("title"));
    return squash(el.getAttribute("title"));
  };

  const states = (el, r) => {
    const out = [];
    if (r === "heading") {
      const level = el.getAttribute("aria-level") || (/^H([1-6])$/.exec(el.tagName) || [])[1];
      if (level) out.push(`level=${level}`);
    }
    if (el.type === "checkbox" || el.type === "radio") { if (el.checked) out.push("checked"); }
    else if (el.getAttribute("aria-checked") === "true") out.push("checked");
    if (el.disabled || el.getAttribute("aria-disabled") === "true") out.push("disabled");
    const expanded = el.getAttribute("aria-expanded");
    if (expanded) out.push(expanded === "true" ? "expanded" : "collapsed");
    if ((el.tagName === "INPUT" && !["checkbox", "radio", "button", "submit", "reset", "image"].includes(el.type))
        || el.tagName === "TEXTAREA") {
      if (el.value) out.push(`value=${quote(cut(el.type === "password" ? "••••" : el.value, NAME_MAX))}`);
    }
    if (el.tagName === "A" && el.hasAttribute("href")) {
      const href = el.getAttribute("href");
      if (href && !href.startsWith("javascript:")) out.push(`url=${quote(cut(href, 200))}`);
    }
    return out;
  };

  const lines = [];
  let chars = 0;
  let truncated = false;
  let nodes = 0;
  const emit = (depth, text) => {
    if (truncated) return;
    const line = "  ".repeat(depth) + "- " + text;
    if (chars + line.length + 1 > maxChars || nodes >= MAX_NODES) { truncated = true; return; }
    chars += line.length + 1;
    lines.push(line);
  };
  const refFor = (el) => {
    let ref = el.getAttribute("data-pincer-ref");
    if (!ref || !/^e\d+$/.test(ref)) {
      ref = "e" + next++;
      el.setAttribute("data-pincer-ref", ref);
    }
    return ref;
  };
  const hasNode = (el) => {
    for (const child of el.children) {
      if (role(child) || hasNode(child)) return true;
    }
    return false;
  };

  const walk = (el, depth) => {
    if (truncated) return;
    for (const child of el.childNodes) {
      if (truncated) return;
      if (child.nodeType === Node.TEXT_NODE) {
        const text = squash(child.textContent);
        if (text) emit(depth, "text: " + cut(text, TEXT_MAX));
        continue;
      }
      if (child.nodeType !== Node.ELEMENT_NODE || SKIP.has(child.tagName.toUpperCase())) continue;
      if (!visible(child)) continue;
      const r = role(child);
      if (!r) {
        if (hasNode(child)) walk(child, depth);
        else {
          const text = textOf(child);
          if (text) emit(depth, "text: " + cut(text, TEXT_MAX));
        }
        continue;
      }
      nodes++;
      const name = cut(nameOf(child, r), NAME_MAX);
      const parts = [r];
      if (name) parts.push(quote(name));
      for (const s of states(child, r)) parts.push(`[${s}]`);
      parts.push(`[ref=${refFor(child)}]`);
      emit(depth, parts.join(" "));
      if (child.tagName === "SELECT") {
        for (const option of child.options) {
          const label = cut(squash(option.label || option.textContent), NAME_MAX);
          emit(depth + 1, `option ${quote(label)}` + (option.selected ? " [selected]" : ""));
        }
      } else if (!LEAF.has(r)) {
        walk(child, depth + 1);
      }
    }
  };
  if (document.body) walk(document.body, 0);
  return {title: document.title, url: location.href, lines, truncated, refs: next - 1,
    ready: document.readyState};
}
