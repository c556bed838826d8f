//! The environment an exec command gets: only an explicit allowlist of the daemon's
//! variables (so API keys and tokens in the gateway's environment never reach a command),
//! plus the variables the model passed. Unless security is `Full`, the model may not set
//! variables that change which program runs or inject code into one (`PATH`, `LD_*`,
//! `BASH_ENV`, ...): with an allowlist those would be a bypass.

use std::collections::BTreeMap;

/// Variables copied from the daemon's environment.
pub const INHERITED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "SHELL",
    "COLORTERM",
    "NO_COLOR",
];

/// Prefixes of inherited variables (locale).
pub const INHERITED_PREFIXES: &[&str] = &["LC_"];

/// `PATH` when the daemon has none.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Variables the model may not set unless security is `Full`.
const GUARDED: &[&str] = &[
    "PATH",
    "IFS",
    "ENV",
    "BASH_ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "NODE_OPTIONS",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PERL5OPT",
    "PERL5LIB",
    "RUBYOPT",
    // glibc loads code from these (iconv modules, locale data).
    "GCONV_PATH",
    "LOCPATH",
    // The character set bash reads the line in: in a multibyte set like Big5 an ASCII
    // `\` or `` ` `` can be the second byte of a character, so the shell would split the
    // line where the allowlist check did not.
    "LC_ALL",
    "LC_CTYPE",
    "LANG",
];

/// Prefixes the model may not set unless security is `Full` (dynamic loader).
const GUARDED_PREFIXES: &[&str] = &["LD_", "DYLD_"];

/// A variable the model asked for that cannot be set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    #[error("invalid environment variable name {0:?} (use letters, digits and _)")]
    InvalidName(String),
    #[error("the value of {0} contains a NUL byte")]
    NulValue(String),
    #[error("setting {0} is not allowed: it changes which program runs or injects code")]
    Guarded(String),
}

/// Whether a variable name (also one assigned on a command line) is guarded.
pub fn is_guarded(name: &str) -> bool {
    GUARDED.contains(&name) || GUARDED_PREFIXES.iter().any(|p| name.starts_with(p))
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The inherited subset of the daemon's environment.
pub fn inherited() -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| {
            INHERITED.contains(&k.as_str()) || INHERITED_PREFIXES.iter().any(|p| k.starts_with(p))
        })
        .collect();
    env.entry("PATH".to_owned())
        .or_insert_with(|| DEFAULT_PATH.to_owned());
    env
}

/// The full environment for a command: the inherited subset plus `extra`. `strict`
/// (any security but `Full`) refuses guarded variables.
pub fn build(
    extra: Option<&BTreeMap<String, String>>,
    strict: bool,
) -> Result<BTreeMap<String, String>, EnvError> {
    let mut env = inherited();
    for (name, value) in extra.into_iter().flatten() {
        if !valid_name(name) {
            return Err(EnvError::InvalidName(name.clone()));
        }
        if value.contains('\0') {
            return Err(EnvError::NulValue(name.clone()));
        }
        if strict && is_guarded(name) {
            return Err(EnvError::Guarded(name.clone()));
        }
        env.insert(name.clone(), value.clone());
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_names_and_guards() {
        let extra = BTreeMap::from([("FOO".to_owned(), "1".to_owned())]);
        let env = build(Some(&extra), true).unwrap();
        assert_eq!(env["FOO"], "1");
        assert!(env.contains_key("PATH"));
        let bad = BTreeMap::from([("A=B".to_owned(), "1".to_owned())]);
        assert!(matches!(
            build(Some(&bad), false),
            Err(EnvError::InvalidName(_))
        ));
        let ld = BTreeMap::from([("LD_PRELOAD".to_owned(), "x.so".to_owned())]);
        assert_eq!(
            build(Some(&ld), true),
            Err(EnvError::Guarded("LD_PRELOAD".into()))
        );
        assert!(build(Some(&ld), false).is_ok());
    }
}
