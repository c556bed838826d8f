//! What the tool does to one attached page: load a URL and wait for it (bounded), run a
//! script of ours, find a ref's element, act on it with real input events, and wait for
//! what an action set off to settle.

use std::time::Duration;

use pincer_agent::ToolError;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::time::Instant;

use super::args::ActKind;
use super::cdp::{Cdp, CdpError, CdpEvent};
use super::conn::PageState;
use super::keys::parse_key;
use super::snapshot::{ref_lookup_expression, valid_ref};

/// How long an action waits for a navigation to start before it calls the page settled.
const NAVIGATION_START_WAIT: Duration = Duration::from_millis(400);

/// How a load ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loaded {
    Yes,
    /// Still loading when the time was up: what is there can be read.
    TimedOut,
}

/// A CDP failure as the model reads it.
pub fn cdp_failed(what: &str, e: &CdpError) -> ToolError {
    match e {
        CdpError::Closed => ToolError::failed(format!(
            "{what}: the browser went away (crashed or stopped); call again to start a new one"
        )),
        _ => ToolError::failed(format!("{what}: {e}")),
    }
}

/// Loads `url` in `page` and waits for its load event, at most `timeout` in all.
pub async fn navigate(
    cdp: &Cdp,
    page: &PageState,
    url: &str,
    timeout: Duration,
) -> Result<Loaded, ToolError> {
    let deadline = Instant::now() + timeout;
    page.take_refused();
    let mut events = cdp.subscribe();
    let session = Some(page.session_id.as_str());
    let answer = cdp
        .call_within("Page.navigate", json!({"url": url}), session, timeout)
        .await;
    let answer = match answer {
        Ok(answer) => answer,
        Err(CdpError::Timeout { .. }) => return Ok(Loaded::TimedOut),
        Err(e) => return Err(cdp_failed(&format!("cannot load {url}"), &e)),
    };
    if let Some(error) = answer.get("errorText").and_then(Value::as_str) {
        return Err(match page.take_refused() {
            Some(reason) => ToolError::failed(format!("navigation refused: {reason}")),
            None => ToolError::failed(format!("cannot load {url}: {error}")),
        });
    }
    if answer.get("loaderId").is_none() {
        // Same document (a fragment): nothing loads.
        return Ok(Loaded::Yes);
    }
    Ok(wait_for(&mut events, page, "Page.loadEventFired", deadline).await)
}

/// Waits for `method` on `page`'s session until `deadline`.
async fn wait_for(
    events: &mut broadcast::Receiver<CdpEvent>,
    page: &PageState,
    method: &str,
    deadline: Instant,
) -> Loaded {
    loop {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Err(_) => return Loaded::TimedOut,
            Ok(Err(broadcast::error::RecvError::Closed)) => return Loaded::TimedOut,
            Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
            Ok(Ok(event)) => {
                if event.method == method
                    && event.session_id.as_deref() == Some(page.session_id.as_str())
                {
                    return Loaded::Yes;
                }
            }
        }
    }
}

/// After an action: when a navigation starts within a moment, waits for it to load (at
/// most `timeout`). `Some` when one started.
pub async fn settle(
    events: &mut broadcast::Receiver<CdpEvent>,
    page: &PageState,
    timeout: Duration,
) -> Option<Loaded> {
    let started = Instant::now();
    let start_deadline = started + NAVIGATION_START_WAIT;
    loop {
        match tokio::time::timeout_at(start_deadline, events.recv()).await {
            Err(_) | Ok(Err(broadcast::error::RecvError::Closed)) => return None,
            Ok(Err(broadcast::error::RecvError::Lagged(_))) => continue,
            Ok(Ok(event)) => {
                let ours = event.session_id.as_deref() == Some(page.session_id.as_str());
                let starts = matches!(
                    event.method.as_str(),
                    "Page.frameRequestedNavigation" | "Page.frameStartedLoading"
                );
                if ours && starts {
                    break;
                }
            }
        }
    }
    Some(wait_for(events, page, "Page.loadEventFired", started + timeout).await)
}

/// Evaluates our own `expression` in the page and returns its value.
pub async fn eval(cdp: &Cdp, page: &PageState, expression: &str) -> Result<Value, ToolError> {
    let params = json!({"expression": expression, "returnByValue": true, "awaitPromise": true});
    evaluate(cdp, page, params).await
}

/// Evaluates the model's `expression`: V8 stops it after `timeout` (a script that loops
/// forever would otherwise hold the page's thread for every later call).
pub async fn eval_user(
    cdp: &Cdp,
    page: &PageState,
    expression: &str,
    timeout: Duration,
) -> Result<Value, ToolError> {
    // A little under the call's own timeout, so V8's answer arrives first.
    let millis = u64::try_from(timeout.as_millis() / 10 * 9).unwrap_or(u64::MAX);
    let params = json!({"expression": expression, "returnByValue": true, "awaitPromise": true,
        "userGesture": true, "timeout": millis});
    let started = Instant::now();
    let result = evaluate(cdp, page, params).await;
    // V8 answers a stopped script with a bare "Internal error": say what happened.
    if result.is_err() && started.elapsed() >= Duration::from_millis(millis) {
        return Err(ToolError::failed(format!(
            "the script ran longer than {:.1} s and was stopped",
            Duration::from_millis(millis).as_secs_f64()
        )));
    }
    result
}

async fn evaluate(cdp: &Cdp, page: &PageState, params: Value) -> Result<Value, ToolError> {
    let answer = cdp
        .call("Runtime.evaluate", params, Some(&page.session_id))
        .await
        .map_err(|e| cdp_failed("cannot read the page", &e))?;
    if let Some(details) = answer.get("exceptionDetails") {
        let text = details
            .get("exception")
            .and_then(|e| e.get("description"))
            .or_else(|| details.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("an exception");
        return Err(ToolError::failed(format!("the script failed: {text}")));
    }
    Ok(answer
        .get("result")
        .and_then(|r| r.get("value"))
        .cloned()
        .unwrap_or(Value::Null))
}

/// The URL and title of the page.
pub async fn location(cdp: &Cdp, page: &PageState) -> Result<(String, String), ToolError> {
    let value = eval(cdp, page, "({url: location.href, title: document.title})").await?;
    let text = |k: &str| {
        value
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    Ok((text("url"), text("title")))
}

/// An element's box, found by its ref and scrolled into view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ElementBox {
    /// Its center in the viewport.
    pub x: f64,
    pub y: f64,
    /// Its top-left corner in the page.
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

/// Finds the element of `r`.
pub async fn find_ref(cdp: &Cdp, page: &PageState, r: &str) -> Result<ElementBox, ToolError> {
    if !valid_ref(r) {
        return Err(ToolError::failed(format!(
            "ref {r:?} is not a snapshot ref (they look like e12); take a snapshot"
        )));
    }
    let value = eval(cdp, page, &ref_lookup_expression(r)).await?;
    if value.is_null() {
        return Err(ToolError::failed(format!(
            "ref {r} not found; take a new snapshot"
        )));
    }
    let n = |k: &str| value.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    Ok(ElementBox {
        x: n("x"),
        y: n("y"),
        left: n("left"),
        top: n("top"),
        width: n("width"),
        height: n("height"),
    })
}

/// What `act` was asked to do, checked.
#[derive(Debug, Clone)]
pub struct ActRequest {
    pub kind: ActKind,
    pub element: Option<String>,
    pub text: Option<String>,
    pub key: Option<String>,
    pub values: Vec<String>,
    pub submit: bool,
}

/// Runs one action; returns what it did, in words.
pub async fn act(cdp: &Cdp, page: &PageState, req: &ActRequest) -> Result<String, ToolError> {
    let session = Some(page.session_id.as_str());
    let input = |method: &'static str, params: Value| async move {
        cdp.call(method, params, session)
            .await
            .map_err(|e| cdp_failed(method, &e))
    };
    let need_ref = || {
        req.element.as_deref().ok_or_else(|| {
            ToolError::failed("give ref: the element's ref from the latest snapshot (e.g. e12)")
        })
    };
    match req.kind {
        ActKind::Click | ActKind::Hover => {
            let r = need_ref()?;
            let b = find_ref(cdp, page, r).await?;
            if b.width <= 0.0 || b.height <= 0.0 {
                return Err(ToolError::failed(format!(
                    "ref {r} has no size on screen (hidden?); take a new snapshot"
                )));
            }
            let mouse = |kind: &str, count: u32| {
                json!({"type": kind, "x": b.x, "y": b.y, "button": if kind == "mouseMoved" {"none"} else {"left"},
                    "buttons": u32::from(kind == "mousePressed"), "clickCount": count})
            };
            input("Input.dispatchMouseEvent", mouse("mouseMoved", 0)).await?;
            if req.kind == ActKind::Hover {
                return Ok(format!("hovered {r}"));
            }
            input("Input.dispatchMouseEvent", mouse("mousePressed", 1)).await?;
            input("Input.dispatchMouseEvent", mouse("mouseReleased", 1)).await?;
            Ok(format!("clicked {r}"))
        }
        ActKind::Type => {
            let r = need_ref()?;
            let text = req
                .text
                .as_deref()
                .ok_or_else(|| ToolError::failed("give text: what to type"))?;
            focus(cdp, page, r).await?;
            input("Input.insertText", json!({"text": text})).await?;
            if req.submit {
                press(cdp, page, "Enter").await?;
                return Ok(format!(
                    "typed {} characters into {r} and pressed Enter",
                    text.chars().count()
                ));
            }
            Ok(format!(
                "typed {} characters into {r}",
                text.chars().count()
            ))
        }
        ActKind::Press => {
            let key = req.key.as_deref().ok_or_else(|| {
                ToolError::failed("give key: e.g. Enter, Tab, Escape, ArrowDown, a")
            })?;
            if let Some(r) = req.element.as_deref() {
                focus(cdp, page, r).await?;
            }
            press(cdp, page, key).await?;
            Ok(format!("pressed {key}"))
        }
        ActKind::Fill => {
            let r = need_ref()?;
            let text = req.text.as_deref().unwrap_or_default();
            find_ref(cdp, page, r).await?;
            let script = format!(
                r#"(() => {{
  const el = document.querySelector('[data-pincer-ref="{r}"]');
  if (!el) return "gone";
  el.focus();
  if (el.isContentEditable) {{ el.textContent = {text}; }}
  else {{
    const proto = el.tagName === "TEXTAREA" ? HTMLTextAreaElement.prototype
      : el.tagName === "SELECT" ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(proto, "value");
    if (!setter || !(el instanceof HTMLElement) || !("value" in el)) return "not fillable";
    setter.set.call(el, {text});
  }}
  el.dispatchEvent(new Event("input", {{bubbles: true}}));
  el.dispatchEvent(new Event("change", {{bubbles: true}}));
  return "ok";
}})()"#,
                text = Value::String(text.to_owned())
            );
            match eval(cdp, page, &script).await?.as_str() {
                Some("ok") => Ok(format!("filled {r}")),
                Some("gone") => Err(ToolError::failed(format!(
                    "ref {r} not found; take a new snapshot"
                ))),
                _ => Err(ToolError::failed(format!(
                    "ref {r} is not a field that takes text"
                ))),
            }
        }
        ActKind::Select => {
            let r = need_ref()?;
            if req.values.is_empty() {
                return Err(ToolError::failed("give values: the options to choose"));
            }
            find_ref(cdp, page, r).await?;
            let script = format!(
                r#"(() => {{
  const el = document.querySelector('[data-pincer-ref="{r}"]');
  if (!el) return {{error: "gone"}};
  if (el.tagName !== "SELECT") return {{error: "not a select"}};
  const wanted = {values};
  const options = Array.from(el.options);
  const missing = wanted.filter((w) => !options.some((o) => o.value === w || o.label.trim() === w));
  if (missing.length) return {{error: "missing", missing, options: options.map((o) => o.label.trim())}};
  for (const o of options) o.selected = wanted.includes(o.value) || wanted.includes(o.label.trim());
  el.dispatchEvent(new Event("input", {{bubbles: true}}));
  el.dispatchEvent(new Event("change", {{bubbles: true}}));
  return {{ok: true}};
}})()"#,
                values = Value::from(req.values.clone())
            );
            let answer = eval(cdp, page, &script).await?;
            match answer.get("error").and_then(Value::as_str) {
                None => Ok(format!("selected {} in {r}", req.values.join(", "))),
                Some("gone") => Err(ToolError::failed(format!(
                    "ref {r} not found; take a new snapshot"
                ))),
                Some("not a select") => Err(ToolError::failed(format!(
                    "ref {r} is not a select element; use click or type"
                ))),
                Some(_) => Err(ToolError::failed(format!(
                    "{r} has no option {}; its options are {}",
                    answer
                        .get("missing")
                        .map(Value::to_string)
                        .unwrap_or_default(),
                    answer
                        .get("options")
                        .map(Value::to_string)
                        .unwrap_or_default()
                ))),
            }
        }
    }
}

async fn focus(cdp: &Cdp, page: &PageState, r: &str) -> Result<(), ToolError> {
    find_ref(cdp, page, r).await?;
    let focused = eval(
        cdp,
        page,
        &format!(r#"(() => {{ const el = document.querySelector('[data-pincer-ref="{r}"]'); if (!el) return false; el.focus(); return true; }})()"#),
    )
    .await?;
    if focused != Value::Bool(true) {
        return Err(ToolError::failed(format!(
            "ref {r} not found; take a new snapshot"
        )));
    }
    Ok(())
}

/// Presses `spec` on whatever has focus: keyDown (with its text) then keyUp.
pub async fn press(cdp: &Cdp, page: &PageState, spec: &str) -> Result<(), ToolError> {
    let key = parse_key(spec).ok_or_else(|| {
        ToolError::failed(format!(
            "unknown key {spec:?}: use a name like Enter, Tab, Escape, Backspace, ArrowDown, \
             a single character, or modifiers like Control+A"
        ))
    })?;
    let session = Some(page.session_id.as_str());
    let mut down = json!({"type": if key.text.is_some() {"keyDown"} else {"rawKeyDown"},
        "key": key.key, "code": key.code, "windowsVirtualKeyCode": key.key_code,
        "nativeVirtualKeyCode": key.key_code, "modifiers": key.modifiers});
    if let Some(text) = &key.text {
        down["text"] = json!(text);
        down["unmodifiedText"] = json!(text);
    }
    cdp.call("Input.dispatchKeyEvent", down, session)
        .await
        .map_err(|e| cdp_failed("cannot press the key", &e))?;
    let up = json!({"type": "keyUp", "key": key.key, "code": key.code,
        "windowsVirtualKeyCode": key.key_code, "nativeVirtualKeyCode": key.key_code,
        "modifiers": key.modifiers});
    cdp.call("Input.dispatchKeyEvent", up, session)
        .await
        .map_err(|e| cdp_failed("cannot press the key", &e))?;
    Ok(())
}
