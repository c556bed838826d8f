//! Telegram's `parse_mode: "HTML"`, checked the way the Bot API server (tdlib) does, with
//! tdlib's error messages, plus one deliberate strictness: a bare `&` that does not start
//! an entity is rejected (Telegram tolerates it, its documentation says to escape it).

/// Tags Telegram supports (`span` only with `class="tg-spoiler"`).
const ALLOWED_TAGS: &[&str] = &[
    "b",
    "strong",
    "i",
    "em",
    "u",
    "ins",
    "s",
    "strike",
    "del",
    "code",
    "pre",
    "a",
    "blockquote",
    "tg-spoiler",
    "span",
];

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Checks `text` as Telegram HTML and returns the visible text (tags removed, entities
/// decoded), or the message that follows `Bad Request: can't parse entities: `.
pub(crate) fn parse_html(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut open: Vec<String> = Vec::new();
    let mut plain_start = 0;
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'&' => {
                out.push_str(text.get(plain_start..i).unwrap_or_default());
                let (ch, len) =
                    decode_entity(text.get(i..).unwrap_or_default()).ok_or_else(|| {
                        format!(
                            "Character '&' at byte offset {i} must start an HTML entity \
                         (&lt;, &gt;, &amp;, &quot; or &#NNN;)"
                        )
                    })?;
                out.push(ch);
                i += len;
                plain_start = i;
            }
            b'<' => {
                out.push_str(text.get(plain_start..i).unwrap_or_default());
                i = parse_tag(text, i, &mut open)?;
                plain_start = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(text.get(plain_start..).unwrap_or_default());
    match open.last() {
        Some(tag) => Err(format!(
            "Can't find end tag corresponding to start tag \"{tag}\""
        )),
        None => Ok(out),
    }
}

/// Decodes the entity at the start of `text` (which starts with `&`): the char and the
/// byte length of the entity including `;`.
fn decode_entity(text: &str) -> Option<(char, usize)> {
    let semicolon = text.bytes().take(12).position(|b| b == b';')?;
    let name = text.get(1..semicolon)?;
    let ch = match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) if !hex.is_empty() => u32::from_str_radix(hex, 16).ok()?,
                Some(_) => return None,
                None if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) => {
                    number.parse().ok()?
                }
                None => return None,
            };
            char::from_u32(code).filter(|c| *c != '\0')?
        }
    };
    Some((ch, semicolon + 1))
}

fn unclosed_start(begin: usize) -> String {
    format!("Unclosed start tag at byte offset {begin}")
}

/// Parses the tag starting at byte `begin` (a `<`), updating the open-tag stack; returns
/// the offset after its `>`.
fn parse_tag(text: &str, begin: usize, open: &mut Vec<String>) -> Result<usize, String> {
    let bytes = text.as_bytes();
    let at = |i: usize| bytes.get(i).copied();
    let slice = |from: usize, to: usize| text.get(from..to).unwrap_or_default().to_owned();
    let mut i = begin + 1;

    if at(i) == Some(b'/') {
        let Some(expected) = open.last().cloned() else {
            return Err(format!("Unexpected end tag at byte offset {begin}"));
        };
        i += 1;
        let name_start = i;
        while at(i).is_some_and(|b| !is_space(b) && b != b'>') {
            i += 1;
        }
        let name = slice(name_start, i).to_ascii_lowercase();
        while at(i).is_some_and(is_space) {
            i += 1;
        }
        if at(i) != Some(b'>') {
            return Err(format!("Unclosed end tag at byte offset {begin}"));
        }
        if !name.is_empty() && name != expected {
            return Err(format!(
                "Unmatched end tag at byte offset {begin}, expected \"</{expected}>\", found \"</{name}>\""
            ));
        }
        open.pop();
        return Ok(i + 1);
    }

    let name_start = i;
    while at(i).is_some_and(|b| !is_space(b) && b != b'>') {
        i += 1;
    }
    if at(i).is_none() {
        return Err(unclosed_start(begin));
    }
    let name = slice(name_start, i).to_ascii_lowercase();
    if !ALLOWED_TAGS.contains(&name.as_str()) {
        return Err(format!(
            "Unsupported start tag \"{name}\" at byte offset {begin}"
        ));
    }

    let mut attributes: Vec<(String, String)> = Vec::new();
    loop {
        while at(i).is_some_and(is_space) {
            i += 1;
        }
        match at(i) {
            None => return Err(unclosed_start(begin)),
            Some(b'>') => {
                i += 1;
                break;
            }
            Some(_) => {}
        }
        let attribute_start = i;
        while at(i).is_some_and(|b| !is_space(b) && b != b'=' && b != b'>') {
            i += 1;
        }
        let attribute = slice(attribute_start, i).to_ascii_lowercase();
        if attribute.is_empty() {
            return Err(format!(
                "Empty attribute name in the tag \"{name}\" at byte offset {begin}"
            ));
        }
        while at(i).is_some_and(is_space) {
            i += 1;
        }
        if at(i) != Some(b'=') {
            if name == "blockquote" && attribute == "expandable" {
                attributes.push((attribute, String::new()));
                continue;
            }
            if at(i).is_none() {
                return Err(unclosed_start(begin));
            }
            return Err(format!(
                "Expected equal sign in declaration of an attribute of the tag \"{name}\" at byte offset {begin}"
            ));
        }
        i += 1;
        while at(i).is_some_and(is_space) {
            i += 1;
        }
        let value = match at(i) {
            None => return Err(unclosed_start(begin)),
            Some(quote @ (b'"' | b'\'')) => {
                let value_start = i + 1;
                i = value_start;
                while at(i).is_some_and(|b| b != quote) {
                    i += 1;
                }
                if at(i).is_none() {
                    return Err(unclosed_start(begin));
                }
                i += 1;
                slice(value_start, i - 1)
            }
            Some(_) => {
                let value_start = i;
                while at(i).is_some_and(|b| !is_space(b) && b != b'>') {
                    i += 1;
                }
                slice(value_start, i)
            }
        };
        attributes.push((attribute, value));
    }

    if name == "span"
        && !attributes
            .iter()
            .any(|(key, value)| key == "class" && value == "tg-spoiler")
    {
        return Err(format!(
            "Tag \"span\" must have class \"tg-spoiler\" at byte offset {begin}"
        ));
    }
    open.push(name);
    Ok(i)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::parse_html;

    #[test]
    fn valid_html_gives_visible_text() {
        let text = r#"<b>bold</b> <i>it <u>u</u></i> <a href="https://x.y/?a=1&amp;b=2">link</a> &lt;3 &amp; &quot;q&quot; &#128512; &#x41; > <pre><code class="language-rust">fn</code></pre> <span class="tg-spoiler">s</span> <tg-spoiler>t</tg-spoiler> <blockquote expandable>q</blockquote> <B>up</B> </>"#;
        // `</>` closes nothing here: it is an unexpected end tag.
        assert!(parse_html(text).is_err());
        let text = text.trim_end_matches(" </>");
        assert_eq!(
            parse_html(text).unwrap(),
            "bold it u link <3 & \"q\" 😀 A > fn s t q up"
        );
    }

    #[test]
    fn errors() {
        let cases = [
            (
                "<b>x",
                "Can't find end tag corresponding to start tag \"b\"",
            ),
            (
                "<b><i>x</b></i>",
                "Unmatched end tag at byte offset 7, expected \"</i>\", found \"</b>\"",
            ),
            ("x</b>", "Unexpected end tag at byte offset 1"),
            ("a <br> b", "Unsupported start tag \"br\" at byte offset 2"),
            ("1 < 2", "Unsupported start tag \"\" at byte offset 2"),
            ("<b", "Unclosed start tag at byte offset 0"),
            ("<a href=\"x>y", "Unclosed start tag at byte offset 0"),
            (
                "<span>x</span>",
                "Tag \"span\" must have class \"tg-spoiler\" at byte offset 0",
            ),
            (
                "<b x>y</b>",
                "Expected equal sign in declaration of an attribute of the tag \"b\" at byte offset 0",
            ),
            ("<b>x</b", "Unclosed end tag at byte offset 4"),
        ];
        for (input, expected) in cases {
            assert_eq!(parse_html(input).unwrap_err(), expected, "input {input:?}");
        }
        for input in ["AT&T", "&nbsp;", "&#;", "&#xZZ;", "&#0;", "tail &"] {
            assert!(
                parse_html(input).unwrap_err().contains("Character '&'"),
                "{input}"
            );
        }
    }

    #[test]
    fn empty_end_tag_closes_the_last_open_tag() {
        assert_eq!(parse_html("<b>x</>").unwrap(), "x");
    }
}
