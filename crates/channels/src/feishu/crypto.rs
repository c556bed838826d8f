//! The HTTP callbacks' cryptography: encrypted bodies (`{"encrypt": base64}`: AES-256-CBC
//! with the SHA-256 of the encrypt key, the IV the first 16 bytes, PKCS#7 padding) and the
//! request signature (lowercase hex SHA-256 of timestamp + nonce + encrypt key + body),
//! with the replay window on the timestamp. Pure functions, clear errors, no panics.

use aes::cipher::block_padding::Pkcs7;
use aes::cipher::{BlockDecryptMut as _, BlockEncryptMut as _, KeyIvInit as _};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

type Decryptor = cbc::Decryptor<aes::Aes256>;
type Encryptor = cbc::Encryptor<aes::Aes256>;

/// How far a callback's timestamp may be from now (seconds) before it is taken for a
/// replay.
pub const MAX_CLOCK_SKEW_SECS: i64 = 5 * 60;

/// Why an encrypted body could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CryptoError {
    #[error("the body is not JSON with an \"encrypt\" string")]
    NotEncrypted,
    #[error("the encrypted field is not base64")]
    Base64,
    #[error("the encrypted data has a bad length ({0} bytes)")]
    Length(usize),
    #[error("the event does not decrypt with this encrypt key")]
    Decrypt,
    #[error("the decrypted event is not UTF-8 JSON")]
    NotJson,
}

fn key_of(encrypt_key: &str) -> [u8; 32] {
    let digest = Sha256::digest(encrypt_key.as_bytes());
    let mut key = [0u8; 32];
    key.copy_from_slice(digest.as_slice());
    key
}

/// The `encrypt` field of a callback body, if it is an encrypted one.
pub fn encrypted_field(body: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(body).ok()?;
    value.get("encrypt")?.as_str().map(str::to_owned)
}

/// Decrypts a callback body `{"encrypt": "…"}` with `encrypt_key`: the event's JSON.
pub fn decrypt_event(encrypt_key: &str, body: &[u8]) -> Result<Vec<u8>, CryptoError> {
    let field = encrypted_field(body).ok_or(CryptoError::NotEncrypted)?;
    decrypt(encrypt_key, &field)
}

/// Decrypts the base64 `encrypt` field itself.
pub fn decrypt(encrypt_key: &str, encrypted: &str) -> Result<Vec<u8>, CryptoError> {
    let bytes = STANDARD
        .decode(encrypted.trim())
        .map_err(|_| CryptoError::Base64)?;
    if bytes.len() < 32 || bytes.len() % 16 != 0 {
        return Err(CryptoError::Length(bytes.len()));
    }
    let (iv, data) = bytes.split_at(16);
    let plain = Decryptor::new_from_slices(&key_of(encrypt_key), iv)
        .map_err(|_| CryptoError::Decrypt)?
        .decrypt_padded_vec_mut::<Pkcs7>(data)
        .map_err(|_| CryptoError::Decrypt)?;
    if serde_json::from_slice::<Value>(&plain).is_err() {
        return Err(CryptoError::NotJson);
    }
    Ok(plain)
}

/// Encrypts `plaintext` as Feishu does (for tests and fakes): base64 of IV + ciphertext.
pub fn encrypt(encrypt_key: &str, plaintext: &[u8], iv: [u8; 16]) -> String {
    let encryptor = Encryptor::new(&key_of(encrypt_key).into(), &iv.into());
    let mut bytes = iv.to_vec();
    bytes.extend(encryptor.encrypt_padded_vec_mut::<Pkcs7>(plaintext));
    STANDARD.encode(bytes)
}

/// The request signature: lowercase hex of SHA-256(timestamp + nonce + key + body).
pub fn signature(timestamp: &str, nonce: &str, encrypt_key: &str, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(timestamp.as_bytes());
    hasher.update(nonce.as_bytes());
    hasher.update(encrypt_key.as_bytes());
    hasher.update(body);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a callback's signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the request is not signed (no X-Lark-Signature, timestamp or nonce)")]
    Missing,
    #[error("the request signature is wrong")]
    Wrong,
    #[error("the request timestamp {0:?} is not a number of seconds")]
    BadTimestamp(String),
    #[error("the request timestamp is {0} s away from now: taken for a replay")]
    Replay(i64),
}

/// Checks a signed callback: the signature over `body`, and its timestamp within
/// [`MAX_CLOCK_SKEW_SECS`] of `now_secs`. Compared in constant time (no early exit), so
/// the time taken says nothing about how much of a forged signature was right.
pub fn verify_signature(
    timestamp: Option<&str>,
    nonce: Option<&str>,
    signed: Option<&str>,
    encrypt_key: &str,
    body: &[u8],
    now_secs: i64,
) -> Result<(), SignatureError> {
    let (Some(timestamp), Some(nonce), Some(signed)) = (timestamp, nonce, signed) else {
        return Err(SignatureError::Missing);
    };
    let expected = signature(timestamp, nonce, encrypt_key, body);
    let signed = signed.trim().to_ascii_lowercase();
    let same = expected.len() == signed.len()
        && expected
            .bytes()
            .zip(signed.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0;
    if !same {
        return Err(SignatureError::Wrong);
    }
    check_timestamp(timestamp, now_secs)
}

/// A request timestamp (seconds) within [`MAX_CLOCK_SKEW_SECS`] of `now_secs`.
pub fn check_timestamp(timestamp: &str, now_secs: i64) -> Result<(), SignatureError> {
    let ts: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| SignatureError::BadTimestamp(timestamp.to_owned()))?;
    let skew = now_secs.saturating_sub(ts).saturating_abs();
    if skew > MAX_CLOCK_SKEW_SECS {
        return Err(SignatureError::Replay(skew));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let sealed = encrypt("key", br#"{"a":1}"#, [7; 16]);
        let body = format!(r#"{{"encrypt":"{sealed}"}}"#);
        assert_eq!(
            decrypt_event("key", body.as_bytes()).unwrap(),
            br#"{"a":1}"#
        );
        // A wrong key almost always breaks the padding; when it happens not to, the
        // garbage is not JSON.
        assert!(matches!(
            decrypt_event("other", body.as_bytes()),
            Err(CryptoError::Decrypt | CryptoError::NotJson)
        ));
    }

    #[test]
    fn known_vector() {
        // Feishu's documented sample: key "test key", `P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=`
        // decrypts to "hello world" — which is not JSON, so it is refused as such (only
        // after decrypting and unpadding succeeded).
        assert_eq!(
            decrypt("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="),
            Err(CryptoError::NotJson)
        );
    }

    #[test]
    fn malformed_bodies() {
        assert_eq!(decrypt_event("k", b"{}"), Err(CryptoError::NotEncrypted));
        assert_eq!(decrypt_event("k", b"nope"), Err(CryptoError::NotEncrypted));
        assert_eq!(
            decrypt_event("k", br#"{"encrypt":"***"}"#),
            Err(CryptoError::Base64)
        );
        assert_eq!(decrypt("k", "AAAA"), Err(CryptoError::Length(3)));
        let odd = STANDARD.encode([0u8; 40]);
        assert_eq!(decrypt("k", &odd), Err(CryptoError::Length(40)));
        let zeros = STANDARD.encode([0u8; 48]);
        assert!(decrypt("k", &zeros).is_err());
    }

    #[test]
    fn signatures() {
        let sig = signature("1700000000", "n", "key", b"{}");
        assert_eq!(sig.len(), 64);
        assert!(
            sig.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        // SHA-256 of the empty string, a fixed point to compare against.
        assert_eq!(
            signature("", "", "", b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let now = 1_700_000_000;
        // Signed at 1700000000 with nonce `n` and key `key`.
        let verify = |sig: &str, body: &[u8], at: i64| {
            verify_signature(Some("1700000000"), Some("n"), Some(sig), "key", body, at)
        };
        assert_eq!(verify(&sig, b"{}", now), Ok(()));
        assert_eq!(verify(&sig.to_uppercase(), b"{}", now), Ok(()));
        assert_eq!(verify(&sig, b"{ }", now), Err(SignatureError::Wrong));
        assert_eq!(
            verify_signature(None, Some("n"), Some(&sig), "key", b"{}", now),
            Err(SignatureError::Missing)
        );
        assert_eq!(
            verify(&sig, b"{}", now + 301),
            Err(SignatureError::Replay(301))
        );
        assert!(matches!(
            check_timestamp("soon", now),
            Err(SignatureError::BadTimestamp(_))
        ));
        assert_eq!(check_timestamp("1700000300", now), Ok(()));
    }
}
