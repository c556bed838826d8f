//! The texts of pairing, in one place so every channel says the same thing: the reply to
//! a stranger (OpenClaw's `buildPairingReply`, with Pincer's name and CLI), the reply when
//! the channel has too many pending requests, the notice to an approved sender and the
//! notice to the owner.

use serde_json::Value;

/// Longest sender name or username shown to the owner.
const MAX_LABEL_CHARS: usize = 64;

/// The reply to a stranger who got (or already had) pairing `code`.
pub fn pairing_reply(channel: &str, code: &str, sender_id: &str) -> String {
    format!(
        "Pincer: access not configured.\n\nYour {channel} id: {sender_id}\nPairing code: {code}\n\n\
         Ask the bot owner to approve with:\npincer pairing approve {channel} {code}"
    )
}

/// The reply to a stranger when the channel already has the most pending requests.
pub fn pairing_full_reply() -> String {
    "Pincer: too many pending pairing requests right now; try again later.".to_string()
}

/// The message to a sender whose request the owner approved.
pub fn approved_notice() -> String {
    "Pincer: access approved. Send your message again.".to_string()
}

/// The owner's notification of a new request. Names from `meta` (`username`, `name`) are
/// shown on one line, cut to 64 characters and without control characters: they are
/// chosen by the stranger, who must not be able to forge lines of this notice.
pub fn owner_notice(channel: &str, sender_id: &str, meta: Option<&Value>, code: &str) -> String {
    let mut labels = Vec::new();
    if let Some(meta) = meta {
        if let Some(username) = meta.get("username").and_then(Value::as_str) {
            let username = one_line(username.trim().trim_start_matches('@'));
            if !username.is_empty() {
                labels.push(format!("@{username}"));
            }
        }
        if let Some(name) = meta.get("name").and_then(Value::as_str) {
            let name = one_line(name);
            if !name.is_empty() {
                labels.push(name);
            }
        }
    }
    let sender = one_line(sender_id);
    let who = if labels.is_empty() {
        sender
    } else {
        format!("{sender} ({})", labels.join(", "))
    };
    format!(
        "Pincer: pairing request on {channel} from {who}.\nPairing code: {code}\n\n\
         Approve with:\npincer pairing approve {channel} {code}"
    )
}

/// `text` with control characters (newlines included) as spaces, runs of spaces collapsed,
/// trimmed and cut to [`MAX_LABEL_CHARS`] characters.
fn one_line(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let joined = words.join(" ");
    match joined.char_indices().nth(MAX_LABEL_CHARS) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_one_short_line() {
        assert_eq!(one_line(" a\nb\t\u{7}c  "), "a b c");
        let long = "x".repeat(70);
        assert_eq!(one_line(&long), format!("{}…", "x".repeat(64)));
        assert_eq!(one_line(&"é".repeat(64)), "é".repeat(64));
    }
}
