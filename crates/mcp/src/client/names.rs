//! Tool names as providers accept them: `<server>__<tool>` made of `[a-zA-Z0-9_-]`, at most
//! 64 characters, unique among the agent's tools; and the `allowTools`/`denyTools` globs.
//! Server and tool names come from outside (config, the server's `tools/list`), so every
//! function here takes any string.

use std::collections::HashSet;

/// The longest tool name OpenAI and Anthropic accept.
pub const MAX_TOOL_NAME: usize = 64;

/// `name` with every character outside `[a-zA-Z0-9_-]` replaced by `_` (empty: `_`).
pub fn sanitize(name: &str) -> String {
    let out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() { "_".to_owned() } else { out }
}

/// The agent-facing name of `tool` on `server`: `<server>__<tool>`, sanitised and cut to
/// [`MAX_TOOL_NAME`] (a cut name ends with a short hash of the whole, so two long names
/// that differ only at the end stay apart).
pub fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("{}__{}", sanitize(server), sanitize(tool));
    if full.len() <= MAX_TOOL_NAME {
        return full;
    }
    let suffix = format!("_{:08x}", fnv1a(full.as_bytes()));
    // Every character is ASCII here, so byte indices are character boundaries.
    format!("{}{}", &full[..MAX_TOOL_NAME - suffix.len()], suffix)
}

/// `name`, or `name` with `_2`, `_3`, … (cut to fit) when `taken` already has it. The
/// chosen name is added to `taken`.
pub fn unique(name: String, taken: &mut HashSet<String>) -> String {
    if taken.insert(name.clone()) {
        return name;
    }
    for n in 2u32.. {
        let suffix = format!("_{n}");
        let keep = name.len().min(MAX_TOOL_NAME - suffix.len());
        let candidate = format!("{}{}", &name[..keep], suffix);
        if taken.insert(candidate.clone()) {
            return candidate;
        }
    }
    // 2^32 names cannot all be taken by one agent's tools.
    name
}

/// A 32-bit FNV-1a hash: stable across builds and platforms (the names must not change
/// between runs, or sessions would name tools that no longer exist).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |hash, b| {
        (hash ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// Whether `name` matches `pattern`: `*` any run of characters, `?` one, the rest literal.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative matcher with one backtrack point: linear in practice, no recursion.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Whether a server's tool passes its `allowTools` (empty: all) and `denyTools` globs.
pub fn tool_allowed(tool: &str, allow: &[String], deny: &[String]) -> bool {
    (allow.is_empty() || allow.iter().any(|p| glob_match(p, tool)))
        && !deny.iter().any(|p| glob_match(p, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_and_cut() {
        assert_eq!(tool_name("fs", "read_text_file"), "fs__read_text_file");
        assert_eq!(
            tool_name("my server", "get.thing/x"),
            "my_server__get_thing_x"
        );
        assert_eq!(tool_name("s", ""), "s___");
        assert_eq!(tool_name("s", "é"), "s___");
        let long = tool_name("server", &"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert!(long.starts_with("server__xxx"));
        let other = tool_name("server", &format!("{}y", "x".repeat(99)));
        assert_ne!(long, other);
    }

    #[test]
    fn collisions_get_a_suffix() {
        let mut taken: HashSet<String> = ["read".to_owned()].into();
        assert_eq!(unique("read".into(), &mut taken), "read_2");
        assert_eq!(unique("read".into(), &mut taken), "read_3");
        let long = "a".repeat(64);
        taken.insert(long.clone());
        let next = unique(long, &mut taken);
        assert_eq!(next.len(), 64);
        assert!(next.ends_with("_2"));
    }

    #[test]
    fn globs() {
        assert!(glob_match("*", "anything"));
        assert!(glob_match("read_*", "read_text_file"));
        assert!(!glob_match("read_*", "write_file"));
        assert!(glob_match("?cho", "echo"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("", ""));
        assert!(!glob_match("", "x"));
        assert!(tool_allowed("echo", &[], &[]));
        assert!(!tool_allowed("echo", &["add".into()], &[]));
        assert!(!tool_allowed("echo", &["*".into()], &["ec*".into()]));
    }
}
