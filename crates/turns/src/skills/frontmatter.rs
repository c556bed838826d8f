//! The YAML frontmatter of a `SKILL.md`, parsed by hand.
//!
//! Why not a YAML crate: the maintained choices either are archived (`serde_yaml`), had
//! soundness trouble (`serde_yml`), or pull in a full YAML 1.2 implementation for five keys —
//! and none is in the offline registry this workspace builds from. SKILL.md frontmatter
//! (AgentSkills) is a flat map of scalars, which this parser reads exactly:
//!
//! - `key: value` lines at column 0; `#` comment lines and blank lines are skipped;
//! - values: plain (an inline ` #` starts a comment), `'single'` (`''` is a quote),
//!   `"double"` (with `\" \\ \n \t \r \/ \uXXXX` escapes), block scalars `|` (newlines kept)
//!   and `>` (folded), with `-`/`+` chomping, and plain scalars continued on indented lines;
//! - an empty value followed by indented lines (a nested block) keeps those lines verbatim,
//!   so OpenClaw's multi-line `metadata: { … }` form still reaches the JSON5 parser.
//!
//! Anything else (sequences, anchors, multi-line quoted strings) is reported as a problem
//! rather than guessed at.

use std::collections::BTreeMap;

/// What is wrong with a frontmatter block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrontmatterError {
    /// The file does not start with a `---` line.
    Missing,
    /// No closing `---` line.
    Unterminated,
    /// A line the subset does not cover (1-based line number within the file).
    Unsupported { line: usize, reason: &'static str },
}

/// Splits `content` into its frontmatter fields (key → raw string value, the last of
/// duplicate keys winning) and leaves the body alone.
pub fn parse_frontmatter(content: &str) -> Result<BTreeMap<String, String>, FrontmatterError> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let mut lines = content.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(FrontmatterError::Missing);
    }
    let mut block = Vec::new();
    let mut closed = false;
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            closed = true;
            break;
        }
        block.push(line);
    }
    if !closed {
        return Err(FrontmatterError::Unterminated);
    }
    parse_block(&block)
}

fn is_indented(line: &str) -> bool {
    line.starts_with(' ') || line.starts_with('\t')
}

fn parse_block(block: &[&str]) -> Result<BTreeMap<String, String>, FrontmatterError> {
    let mut fields = BTreeMap::new();
    let mut i = 0;
    while i < block.len() {
        // Line numbers are 1-based and the opening `---` is line 1.
        let line_no = i + 2;
        let line = block[i];
        i += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if is_indented(line) {
            return Err(FrontmatterError::Unsupported {
                line: line_no,
                reason: "an indented line that continues no key",
            });
        }
        let Some((key, rest)) = split_key(line) else {
            return Err(FrontmatterError::Unsupported {
                line: line_no,
                reason: "expected `key: value`",
            });
        };
        // The indented lines after a key belong to it.
        let start = i;
        while i < block.len() && (block[i].trim().is_empty() || is_indented(block[i])) {
            i += 1;
        }
        let continuation = &block[start..i];
        let value = parse_value(rest.trim(), continuation, line_no)?;
        fields.insert(key.to_string(), value);
    }
    Ok(fields)
}

/// `key: rest` where the key is `[A-Za-z_][A-Za-z0-9_-]*`.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let (key, rest) = line.split_once(':')?;
    let mut chars = key.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    // `key:value` without a space is not a YAML mapping entry (think `url:http://…`).
    let separated = rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t');
    (first_ok && rest_ok && separated).then_some((key, rest))
}

fn parse_value(
    inline: &str,
    continuation: &[&str],
    line_no: usize,
) -> Result<String, FrontmatterError> {
    let has_continuation = continuation.iter().any(|l| !l.trim().is_empty());
    if let Some(indicator) = inline.strip_prefix('|') {
        return Ok(block_scalar(indicator, continuation, false));
    }
    if let Some(indicator) = inline.strip_prefix('>') {
        return Ok(block_scalar(indicator, continuation, true));
    }
    if inline.starts_with('"') || inline.starts_with('\'') {
        if has_continuation {
            return Err(FrontmatterError::Unsupported {
                line: line_no,
                reason: "quoted values must fit on one line",
            });
        }
        return parse_quoted(inline).ok_or(FrontmatterError::Unsupported {
            line: line_no,
            reason: "an unterminated or malformed quoted value",
        });
    }
    if inline.starts_with('&') || inline.starts_with('*') || inline.starts_with('!') {
        return Err(FrontmatterError::Unsupported {
            line: line_no,
            reason: "YAML anchors, aliases and tags are not supported",
        });
    }
    let inline = strip_inline_comment(inline);
    if inline.is_empty() {
        // A nested block: keep it verbatim (dedented) for a caller that parses it itself.
        return Ok(dedent(continuation).join("\n").trim().to_string());
    }
    // A plain scalar folds its continuation lines into one line.
    let mut value = inline.to_string();
    for line in continuation {
        let part = line.trim();
        if !part.is_empty() {
            value.push(' ');
            value.push_str(strip_inline_comment(part));
        }
    }
    Ok(value)
}

fn strip_inline_comment(value: &str) -> &str {
    match value.find(" #") {
        Some(at) => value[..at].trim_end(),
        None => value.trim_end(),
    }
}

fn dedent<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                ""
            } else {
                // Leading whitespace may be multi-byte; never cut inside a character.
                l.get(indent..).unwrap_or_else(|| l.trim_start())
            }
        })
        .collect()
}

/// `|` or `>` with optional chomping (`-` strip, `+` keep, default clip to one newline).
fn block_scalar(indicator: &str, continuation: &[&str], fold: bool) -> String {
    let indicator = strip_inline_comment(indicator.trim());
    let lines = dedent(continuation);
    let body = if fold {
        fold_lines(&lines)
    } else {
        lines.join("\n")
    };
    let stripped = body.trim_end_matches('\n');
    if indicator.contains('-') {
        stripped.to_string()
    } else if indicator.contains('+') {
        format!("{body}\n")
    } else if stripped.is_empty() {
        String::new()
    } else {
        format!("{stripped}\n")
    }
}

/// YAML folding: lines of a paragraph join with a space; a blank line is a newline.
fn fold_lines(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut previous_blank = true;
    for line in lines {
        if line.trim().is_empty() {
            out.push('\n');
            previous_blank = true;
        } else {
            if !previous_blank {
                out.push(' ');
            }
            out.push_str(line.trim_end());
            previous_blank = false;
        }
    }
    out
}

/// A single- or double-quoted scalar that must end the line (a trailing comment allowed).
fn parse_quoted(inline: &str) -> Option<String> {
    let quote = inline.chars().next()?;
    let mut out = String::new();
    let mut chars = inline[1..].char_indices();
    while let Some((at, c)) = chars.next() {
        if c == quote {
            if quote == '\'' && inline[1 + at + 1..].starts_with('\'') {
                out.push('\'');
                chars.next();
                continue;
            }
            let after = inline[1 + at + 1..].trim();
            return (after.is_empty() || after.starts_with('#')).then_some(out);
        }
        if quote == '"' && c == '\\' {
            let (_, escaped) = chars.next()?;
            match escaped {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '"' | '\\' | '/' => out.push(escaped),
                'u' => {
                    let hex: String = (0..4)
                        .filter_map(|_| chars.next().map(|(_, h)| h))
                        .collect();
                    let code = u32::from_str_radix(&hex, 16).ok()?;
                    out.push(char::from_u32(code)?);
                }
                _ => return None,
            }
            continue;
        }
        out.push(c);
    }
    None
}
