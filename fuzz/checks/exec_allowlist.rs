//! The exec allowlist's fuzz check, shared by `fuzz/fuzz_targets/exec_allowlist.rs` and
//! `crates/tools/tests/it/exec_allowlist_differential.rs` (which runs it under proptest, and
//! also runs what the checker admits under real shells), so the two cannot drift apart.
//!
//! The checker never panics; what it admits runs only allowed programs; and an admitted
//! line passes a second, deliberately simpler reading of the shell's quoting ([`scan`]):
//! outside single quotes there is no command substitution, no arithmetic, no `(`/`)` and
//! no `${...}` whose body could end early, nest, quote or expand (the shape of the
//! `${x:-{} ; touch PWNED ; id #}` and `${x:-'}'}` bypasses). And a line that is admitted
//! stays contained: the same line followed by an empty line and `rm` is refused.

use pincer_tools::exec::allowlist::{check as allowlist_check, parse};

/// The allowlist every check uses.
pub const ALLOWED: [&str; 3] = ["echo", "true", "printf"];

pub fn allowed() -> Vec<String> {
    ALLOWED.iter().map(|s| (*s).to_owned()).collect()
}

/// Check one input; panics on a violation. Returns whether the line was admitted.
pub fn check(line: &str) -> bool {
    let _ = parse(line);
    let allowed = allowed();
    let Ok(programs) = allowlist_check(line, &allowed) else {
        return false;
    };
    for program in &programs {
        assert!(
            allowed.contains(program),
            "{line:?} let {program:?} through"
        );
    }
    if let Err(why) = scan(line) {
        panic!("{line:?} was admitted but {why}");
    }
    // Two newlines: a trailing `\` may rightly continue the line onto the first.
    let followed = format!("{line}\n\nrm");
    assert!(
        allowlist_check(&followed, &allowed).is_err(),
        "{followed:?} was admitted: the line swallowed the next one"
    );
    true
}

/// A second opinion on an admitted line, with its own minimal model of quoting: single
/// quotes, double quotes, backslash escapes and comments at the start of a word.
pub fn scan(line: &str) -> Result<(), String> {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut in_double = false;
    let mut word_start = true;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if !in_double {
            match c {
                '\'' => {
                    match chars[i + 1..].iter().position(|q| *q == '\'') {
                        Some(end) => i += end + 2,
                        None => return Err("has an unterminated single quote".into()),
                    }
                    word_start = false;
                    continue;
                }
                '#' if word_start => {
                    while i < chars.len() && chars[i] != '\n' {
                        i += 1;
                    }
                    continue;
                }
                '(' | ')' => return Err(format!("has an unquoted {c:?}")),
                _ => {}
            }
        }
        match c {
            '\\' => {
                // A line continuation joins nothing here (the checker refuses it inside a
                // word); an escaped character is part of a word.
                if next != Some('\n') {
                    word_start = false;
                }
                i += 2;
                continue;
            }
            '"' => in_double = !in_double,
            '`' => return Err("has a backtick".into()),
            '$' => match next {
                Some('(') => return Err("has $( or $((".into()),
                Some('[') => return Err("has $[".into()),
                Some('\'') if !in_double => return Err("has $'".into()),
                // `$$`, `$#`, ...: a special parameter, whatever follows.
                Some(special) if special.is_ascii_digit() || "@*#?$!-".contains(special) => {
                    i += 2;
                    word_start = false;
                    continue;
                }
                Some('{') => {
                    let body: String = chars[i + 2..].iter().take_while(|b| **b != '}').collect();
                    if i + 2 + body.chars().count() >= chars.len() {
                        return Err("has an unterminated ${".into());
                    }
                    if let Some(bad) = body
                        .chars()
                        .find(|b| !(b.is_ascii_alphanumeric() || "_./,:=+-@%^*?~#!$".contains(*b)))
                    {
                        return Err(format!("has ${{{body}}} with {bad:?} inside"));
                    }
                    if body.contains('$') && body != "$" {
                        return Err(format!("has ${{{body}}} with an expansion inside"));
                    }
                    i += 2 + body.chars().count() + 1;
                    word_start = false;
                    continue;
                }
                _ => {}
            },
            _ => {}
        }
        word_start = !in_double && matches!(c, ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>');
        i += 1;
    }
    if in_double {
        return Err("has an unterminated double quote".into());
    }
    Ok(())
}
