//! Pairing codes: 8 characters from a 32-letter alphabet without look-alikes (no `0`, `O`,
//! `1`, `I`), read aloud or typed from a phone. They come from the OS CSPRNG: a code is
//! what lets a stranger in once the owner approves it, so it must not be guessable from
//! other codes.

use super::error::PairingError;

/// Characters of a code.
pub const CODE_LENGTH: usize = 8;

/// The code alphabet: A–Z and 2–9 without `0`, `O`, `1`, `I`. Exactly 32 characters, so a
/// random byte masked to 5 bits picks one without bias.
pub const CODE_ALPHABET: &str = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/// A fresh random code.
pub fn generate_code() -> Result<String, PairingError> {
    let alphabet = CODE_ALPHABET.as_bytes();
    let mut bytes = [0u8; CODE_LENGTH];
    getrandom::fill(&mut bytes).map_err(|e| PairingError::Random {
        message: e.to_string(),
    })?;
    Ok(bytes
        .iter()
        .map(|b| char::from(alphabet[usize::from(b & 0x1f)]))
        .collect())
}

/// Whether `code` has the shape of a code (length and alphabet; upper case).
pub fn is_valid_code(code: &str) -> bool {
    code.len() == CODE_LENGTH && code.bytes().all(|b| CODE_ALPHABET.as_bytes().contains(&b))
}

/// How codes compare: trimmed, upper case (the owner may type `abcd2345`).
pub(crate) fn normalize_code(code: &str) -> String {
    code.trim().to_ascii_uppercase()
}

/// Tries to find a code that no pending request of the channel uses. With at most a few
/// pending requests among 32^8 codes a clash is almost impossible; the bound only keeps a
/// broken random source from looping forever.
pub(crate) fn generate_unique_code(
    taken: &std::collections::HashSet<String>,
) -> Result<String, PairingError> {
    const ATTEMPTS: usize = 500;
    for _ in 0..ATTEMPTS {
        let code = generate_code()?;
        if !taken.contains(&code) {
            return Ok(code);
        }
    }
    Err(PairingError::Random {
        message: format!("no unused code after {ATTEMPTS} attempts"),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn alphabet_has_32_distinct_unambiguous_characters() {
        let mut chars: Vec<char> = CODE_ALPHABET.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        assert_eq!(chars.len(), 32);
        for c in ['0', 'O', '1', 'I'] {
            assert!(!CODE_ALPHABET.contains(c));
        }
    }

    #[test]
    fn codes_are_valid_and_normalized_comparison() {
        let code = generate_code().unwrap();
        assert!(is_valid_code(&code), "{code}");
        assert_eq!(normalize_code(&format!(" {} ", code.to_lowercase())), code);
        assert!(!is_valid_code("ABCD234"));
        assert!(!is_valid_code("ABCD2340"));
        assert!(!is_valid_code("abcd2345"));
    }
}
