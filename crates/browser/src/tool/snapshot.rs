//! `snapshot`: runs the crate's own outline script (`snapshot.js`) in the page and turns its
//! answer into the text the model reads. The refs live in the page as `data-pincer-ref`
//! attributes, so they stay valid across calls and processes until the page changes;
//! [`ref_lookup_expression`] finds one again for `act` and `screenshot {ref}`. Limits: the
//! main document only (not the inside of iframes or shadow roots); the script runs in the
//! page's own world, so a hostile page can change what it reports about itself (never
//! more: its answer is read as untrusted JSON, bounded again here).

use pincer_web::fetch::{neutralize, wrap_untrusted};
use serde_json::{Value, json};

/// The outline script: a function of `maxChars`.
const SCRIPT: &str = include_str!("snapshot.js");

/// The most characters a snapshot may ask for, whatever the call says.
pub const SNAPSHOT_CHARS_CAP: usize = 200_000;

/// The expression `Runtime.evaluate` runs for a snapshot of at most `max_chars` characters.
pub fn snapshot_expression(max_chars: usize) -> String {
    format!("({SCRIPT})({})", max_chars.min(SNAPSHOT_CHARS_CAP))
}

/// A snapshot as the script returned it (`returnByValue`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    pub title: String,
    pub url: String,
    pub lines: Vec<String>,
    pub truncated: bool,
    pub refs: u64,
    /// `document.readyState`: "loading" for a page still loading (a partial snapshot).
    pub ready: String,
}

impl Snapshot {
    /// Reads the script's value; anything else (a page that replaced our globals, a
    /// malformed answer) is read as far as it goes, never a panic. `max_chars` bounds the
    /// lines again here: the page could have lied.
    pub fn from_value(value: &Value, max_chars: usize) -> Self {
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .map(|s| truncate_chars(s, 2000))
                .unwrap_or_default()
        };
        let mut snapshot = Self {
            title: text("title"),
            url: text("url"),
            truncated: value.get("truncated").and_then(Value::as_bool) == Some(true),
            refs: value.get("refs").and_then(Value::as_u64).unwrap_or(0),
            ready: text("ready"),
            lines: Vec::new(),
        };
        let mut used = 0usize;
        for line in value
            .get("lines")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let len = line.chars().count() + 1;
            if used + len > max_chars {
                snapshot.truncated = true;
                break;
            }
            used += len;
            snapshot.lines.push(line.to_owned());
        }
        snapshot
    }

    /// The text the model reads: what the tool vouches for (the URL, whether the page was
    /// still loading, whether the outline was cut), then the page's title and outline as
    /// untrusted web content (pincer-web's markers, as `web_fetch` gives a page).
    pub fn render(&self) -> String {
        let mut head = format!("URL: {}\n", neutralize(&self.url));
        if self.ready == "loading" {
            head.push_str("(the page is still loading: this snapshot may be partial)\n");
        }
        if self.truncated {
            head.push_str(
                "Truncated at maxChars: raise maxChars, or scroll and snapshot again to see more.\n",
            );
        }
        let mut body = format!("Page: {}", self.title);
        if self.lines.is_empty() {
            body.push_str("\n(the page shows nothing)");
        }
        for line in &self.lines {
            body.push('\n');
            body.push_str(line);
        }
        format!(
            "{head}\n{}",
            wrap_untrusted("browser snapshot", &neutralize(&body))
        )
    }

    pub fn details(&self, target_id: &str) -> Value {
        json!({
            "ok": true,
            "targetId": target_id,
            "url": self.url,
            "title": self.title,
            "refs": self.refs,
            "truncated": self.truncated,
        })
    }
}

/// `s` cut to at most `max` characters.
pub fn truncate_chars(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => s[..at].to_owned(),
        None => s.to_owned(),
    }
}

/// Whether `r` is a ref the snapshot hands out (`e` and digits): only such a ref is ever
/// put into a script.
pub fn valid_ref(r: &str) -> bool {
    r.len() > 1 && r.len() < 12 && r.starts_with('e') && r[1..].bytes().all(|b| b.is_ascii_digit())
}

/// An expression that finds the element of `r` (checked by [`valid_ref`]), scrolls it into
/// view and returns its box in viewport and page coordinates, or `null` when it is gone
/// (or no longer the only element with that ref).
pub fn ref_lookup_expression(r: &str) -> String {
    format!(
        r#"(() => {{
  const all = document.querySelectorAll('[data-pincer-ref="{r}"]');
  if (all.length !== 1) return null;
  const el = all[0];
  el.scrollIntoView({{block: "center", inline: "center", behavior: "instant"}});
  const b = el.getBoundingClientRect();
  return {{x: b.left + b.width / 2, y: b.top + b.height / 2, left: b.left + scrollX,
    top: b.top + scrollY, width: b.width, height: b.height, tag: el.tagName}};
}})()"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_answer_reads_as_far_as_it_goes() {
        let s = Snapshot::from_value(&json!({"lines": ["- a", 3, "- b"], "title": 5}), 100);
        assert_eq!(s.lines, ["- a", "- b"]);
        assert_eq!(s.title, "");
        let s = Snapshot::from_value(&json!({"lines": ["- aaaa", "- bbbb"]}), 8);
        assert_eq!(s.lines, ["- aaaa"]);
        assert!(s.truncated);
        assert_eq!(Snapshot::from_value(&json!(null), 10), Snapshot::default());
    }

    #[test]
    fn refs_are_checked_before_they_reach_a_script() {
        assert!(valid_ref("e12"));
        for bad in ["", "e", "12", "e1'", "e1\"]", "E1", "e١", "e12345678901"] {
            assert!(!valid_ref(bad), "{bad}");
        }
    }
}
