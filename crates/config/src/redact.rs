//! Masking secrets before a config is printed (`pincer config get`, WS `config.get`,
//! diagnostics). A value is secret when its key names a secret:
//! - the key's last word (camelCase, `_` or `-` separated) is key, token, secret, access
//!   or refresh, so `apiKey`, `botToken`, `client_secret` and `x-api-key`
//!   are masked while `maxTokens` is not (`mainKey` names a session and stays visible);
//! - or the key contains password, passwd, cookie, authorization, credential or private
//!   anywhere (`proxyPassword`, `Set-Cookie`, `clientCredentials`, `private_key_pem`);
//! - or it sits anywhere under an object named `headers` or `env`: header values
//!   (`Cookie`, `X-Auth`, …) and environment maps are credentials more often than not, and
//!   their names say nothing reliable, so every value there is masked and only the names
//!   are shown.
//!
//! All keys are compared case-insensitively. Everything under a secret key is masked. A
//! `${NAME}` reference is shown as written: it is not the secret.

use serde_json::{Map, Value};

use crate::edit::get;
use crate::env_subst::is_single_reference;
use crate::keypath::KeyPath;

/// Secret when the whole key or its last word is one of these (words that are secret
/// anywhere in a key, like `password`, are in [`SECRET_PARTS`] instead).
const SECRET_WORDS: &[&str] = &["key", "apikey", "token", "secret", "access", "refresh"];

/// Secret when the key contains one of these anywhere (compared lowercased).
const SECRET_PARTS: &[&str] = &[
    "password",
    "passwd",
    "cookie",
    "authorization",
    "credential",
    "private",
];

/// Objects whose every value is secret, at any depth (compared lowercased).
const SECRET_CONTAINERS: &[&str] = &["headers", "env"];

/// Keys that end in a secret word but hold no secret.
const NOT_SECRET: &[&str] = &["mainKey"];

/// `value` with every secret-looking string masked as `abc***xyz` (or `***` when short).
pub fn redact(value: &Value) -> Value {
    walk(value, false)
}

/// The value at `path` with secrets masked, judged in place: `models.providers.p.apiKey`
/// is masked although the value alone carries no key name. What `config get` prints.
pub fn redacted_get(raw: &Value, path: &KeyPath) -> Option<Value> {
    get(&redact(raw), path).cloned()
}

/// Whether `key` names a secret (see the module doc).
pub fn is_secret_key(key: &str) -> bool {
    if NOT_SECRET.contains(&key) {
        return false;
    }
    let lower = key.to_lowercase();
    let last_word = last_word(key).to_lowercase();
    SECRET_WORDS.contains(&lower.as_str())
        || SECRET_WORDS.contains(&last_word.as_str())
        || SECRET_PARTS.iter().any(|part| lower.contains(part))
        || SECRET_CONTAINERS.contains(&lower.as_str())
}

/// `"sk-abcdef123456"` → `"sk-***456"` (short ones `***`): [`pincer_base::mask_secret`].
pub fn mask(secret: &str) -> String {
    pincer_base::mask_secret(secret)
}

fn walk(value: &Value, secret: bool) -> Value {
    match value {
        Value::String(s) if secret && !is_single_reference(s) => Value::String(mask(s)),
        Value::Number(_) | Value::Bool(_) if secret => {
            Value::String(pincer_base::secret::MASK.to_owned())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| walk(v, secret)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), walk(v, secret || is_secret_key(k))))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// The last word of a camelCase, snake_case or kebab-case name.
fn last_word(key: &str) -> &str {
    let trimmed = key.trim_end_matches(['_', '-']);
    let mut start = 0;
    let mut previous_lower = false;
    for (i, c) in trimmed.char_indices() {
        if c == '_' || c == '-' {
            start = i + 1;
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            start = i;
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    &trimmed[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_keys() {
        for key in [
            "apiKey",
            "key",
            "botToken",
            "client_secret",
            "x-api-key",
            "PASSWORD",
            "access",
            "refreshToken",
            "Authorization",
            "APIKEY",
            "headers",
            "Env",
            "Cookie",
            "set-cookie",
            "proxyPassword",
            "db_passwd",
            "credentials",
            "clientCredential",
            "privateKeyPem",
            "PRIVATE",
            "proxyAuthorization",
        ] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in [
            "mainKey",
            "maxTokens",
            "keys",
            "name",
            "accessMode2",
            "",
            "environment",
            "header",
        ] {
            assert!(!is_secret_key(key), "{key}");
        }
    }
}
