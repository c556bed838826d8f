//! PKCE (RFC 7636, method S256) and the random `state` of an authorization request. Both
//! come from the operating system's secure random source (`getrandom`).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use super::OAuthError;
use crate::secret::Secret;

/// 32 random bytes give a 43-character verifier, the shortest RFC 7636 allows and what
/// pi-ai and the Codex CLI send.
const VERIFIER_BYTES: usize = 32;
/// 16 random bytes, hex: pi-ai's `state`.
const STATE_BYTES: usize = 16;

/// A PKCE verifier (kept secret until the code exchange) and its S256 challenge (sent in
/// the authorization URL). `Debug` is derived: the verifier is a [`Secret`].
#[derive(Debug, Clone)]
pub struct Pkce {
    verifier: Secret,
    challenge: String,
}

impl Pkce {
    /// A fresh random verifier and its challenge.
    pub fn generate() -> Result<Self, OAuthError> {
        let bytes: [u8; VERIFIER_BYTES] = random_bytes()?;
        Ok(Self::from_verifier(&URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// The challenge of a given verifier: `BASE64URL(SHA256(verifier))` without padding.
    pub fn from_verifier(verifier: &str) -> Self {
        let digest = Sha256::digest(verifier.as_bytes());
        Self {
            verifier: verifier.into(),
            challenge: URL_SAFE_NO_PAD.encode(digest),
        }
    }

    pub fn verifier(&self) -> &Secret {
        &self.verifier
    }

    pub fn challenge(&self) -> &str {
        &self.challenge
    }
}

/// A fresh `state`: 32 lowercase hex digits.
pub fn random_state() -> Result<String, OAuthError> {
    let bytes: [u8; STATE_BYTES] = random_bytes()?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn random_bytes<const N: usize>() -> Result<[u8; N], OAuthError> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).map_err(|e| OAuthError::Random(e.to_string()))?;
    Ok(bytes)
}
