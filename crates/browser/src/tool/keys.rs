//! Keys for `act {kind: press}`: a name like "Enter", "ArrowDown", "a" or "Control+A" as
//! the `Input.dispatchKeyEvent` fields Chromium needs for a real key press (key, code,
//! Windows key code, the text it types, modifiers).

/// One key press, ready for `Input.dispatchKeyEvent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPress {
    pub key: String,
    pub code: String,
    pub key_code: u32,
    /// What the key types (`\r` for Enter); none for keys that type nothing or with
    /// Control/Alt/Meta held.
    pub text: Option<String>,
    /// CDP's bit mask: Alt 1, Control 2, Meta 4, Shift 8.
    pub modifiers: u32,
}

/// Parses `spec` ("Enter", "Esc", "Control+Shift+T", "a"); `None` for a key not known.
pub fn parse_key(spec: &str) -> Option<KeyPress> {
    let parts: Vec<&str> = spec.split('+').map(str::trim).collect();
    let (name, modifier_names) = match parts.split_last() {
        // "Control++" names the plus key.
        Some((&"", rest)) if spec.ends_with("++") || spec == "+" => {
            ("+", rest.get(..rest.len().saturating_sub(1)).unwrap_or(&[]))
        }
        Some((name, rest)) => (*name, rest),
        None => return None,
    };
    let mut modifiers = 0;
    for m in modifier_names {
        modifiers |= match m.to_ascii_lowercase().as_str() {
            "alt" | "option" => 1,
            "control" | "ctrl" => 2,
            "meta" | "cmd" | "command" | "super" => 4,
            "shift" => 8,
            _ => return None,
        };
    }
    let mut press = named_key(name).or_else(|| char_key(name))?;
    press.modifiers = modifiers;
    if modifiers & 0b111 != 0 {
        press.text = None;
    } else if modifiers & 8 != 0
        && let Some(text) = press.text.as_deref()
        && text.chars().all(|c| c.is_ascii_alphabetic())
    {
        let upper = text.to_ascii_uppercase();
        press.key.clone_from(&upper);
        press.text = Some(upper);
    }
    Some(press)
}

fn key(key: &str, code: &str, key_code: u32, text: Option<&str>) -> KeyPress {
    KeyPress {
        key: key.to_owned(),
        code: code.to_owned(),
        key_code,
        text: text.map(str::to_owned),
        modifiers: 0,
    }
}

fn named_key(name: &str) -> Option<KeyPress> {
    let lower = name.to_ascii_lowercase();
    Some(match lower.as_str() {
        "enter" | "return" => key("Enter", "Enter", 13, Some("\r")),
        "tab" => key("Tab", "Tab", 9, None),
        "escape" | "esc" => key("Escape", "Escape", 27, None),
        "backspace" => key("Backspace", "Backspace", 8, None),
        "delete" | "del" => key("Delete", "Delete", 46, None),
        "space" | " " => key(" ", "Space", 32, Some(" ")),
        "arrowup" | "up" => key("ArrowUp", "ArrowUp", 38, None),
        "arrowdown" | "down" => key("ArrowDown", "ArrowDown", 40, None),
        "arrowleft" | "left" => key("ArrowLeft", "ArrowLeft", 37, None),
        "arrowright" | "right" => key("ArrowRight", "ArrowRight", 39, None),
        "home" => key("Home", "Home", 36, None),
        "end" => key("End", "End", 35, None),
        "pageup" => key("PageUp", "PageUp", 33, None),
        "pagedown" => key("PageDown", "PageDown", 34, None),
        "insert" => key("Insert", "Insert", 45, None),
        _ => {
            let n: u32 = lower.strip_prefix('f')?.parse().ok()?;
            if !(1..=12).contains(&n) {
                return None;
            }
            let f = format!("F{n}");
            key(&f, &f, 111 + n, None)
        }
    })
}

fn char_key(name: &str) -> Option<KeyPress> {
    let mut chars = name.chars();
    let c = chars.next()?;
    if chars.next().is_some() {
        return None;
    }
    let text = c.to_string();
    Some(if c.is_ascii_alphabetic() {
        let upper = c.to_ascii_uppercase();
        key(&text, &format!("Key{upper}"), u32::from(upper), Some(&text))
    } else if c.is_ascii_digit() {
        key(&text, &format!("Digit{c}"), u32::from(c), Some(&text))
    } else {
        // Punctuation and other characters: the key types itself; no physical code.
        key(&text, "", 0, Some(&text))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_with_codes_text_and_modifiers() {
        assert_eq!(
            parse_key("Enter"),
            Some(key("Enter", "Enter", 13, Some("\r")))
        );
        assert_eq!(parse_key("esc").map(|k| k.key), Some("Escape".to_owned()));
        assert_eq!(parse_key("a"), Some(key("a", "KeyA", 65, Some("a"))));
        let ctrl_a = parse_key("Control+a").unwrap();
        assert_eq!((ctrl_a.modifiers, ctrl_a.text), (2, None));
        let shift_b = parse_key("Shift+b").unwrap();
        assert_eq!(
            (shift_b.key.as_str(), shift_b.text.as_deref()),
            ("B", Some("B"))
        );
        assert_eq!(parse_key("F5").map(|k| k.key_code), Some(116));
        assert_eq!(
            parse_key("Control++").map(|k| (k.key, k.modifiers)),
            Some(("+".to_owned(), 2))
        );
        for bad in ["", "Hyper+a", "F13", "abc", "Control+"] {
            assert_eq!(parse_key(bad), None, "{bad}");
        }
    }
}
