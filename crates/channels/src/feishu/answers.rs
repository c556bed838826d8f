//! Reading the Open API's answers, and the small pure rules of the REST calls: the
//! `{"code", "msg", …}` envelope as [`ChannelError`]s (a code other than 0 is an error even
//! with HTTP 200), the long connection's endpoint, ids safe in a path, and which upload
//! endpoint and `file_type` a file takes.

use pincer_channel_port::ChannelError;
use serde_json::Value;

use super::CHANNEL;

/// "Too many requests" in the envelope.
pub const RATE_LIMIT_CODE: i64 = 99991400;
/// The tenant token is invalid (99991663) or expired (99991661): refresh and retry once.
pub const TOKEN_INVALID_CODES: [i64; 2] = [99991663, 99991661];

/// Where to open the long connection, and the ping interval Feishu asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WsEndpoint {
    pub url: String,
    /// Seconds (`ClientConfig.PingInterval`).
    pub ping_interval: Option<u64>,
}

pub(super) fn api_error(message: String) -> ChannelError {
    ChannelError::Api {
        channel: CHANNEL.into(),
        message,
    }
}

pub(super) fn sent_id(sent: &Value) -> String {
    sent.pointer("/data/message_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub(super) fn data_key(done: &Value, key: &str) -> Result<String, ChannelError> {
    done.get("data")
        .and_then(|d| d.get(key))
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| api_error(format!("the upload gave no {key}")))
}

/// An id as a path segment: letters, digits, `_` and `-` only (an id from config or an
/// agent could otherwise walk the API's paths).
pub fn path_segment(id: &str) -> Result<&str, ChannelError> {
    if !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(id)
    } else {
        Err(api_error(format!("{id:?} is not a Feishu id")))
    }
}

/// Whether Feishu takes `file_name` as an image (`/im/v1/images`) rather than a file.
pub fn is_image(file_name: &str) -> bool {
    matches!(
        extension(file_name).as_str(),
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "bmp" | "ico" | "tif" | "tiff" | "heic"
    )
}

/// The `file_type` of an upload, by extension (`stream`: any other file).
pub fn file_type_for(file_name: &str) -> &'static str {
    match extension(file_name).as_str() {
        "pdf" => "pdf",
        "doc" | "docx" => "doc",
        "xls" | "xlsx" | "csv" => "xls",
        "ppt" | "pptx" => "ppt",
        "mp4" => "mp4",
        "opus" => "opus",
        _ => "stream",
    }
}

fn extension(file_name: &str) -> String {
    file_name
        .rsplit_once('.')
        .map(|(_, ext)| ext.to_ascii_lowercase())
        .unwrap_or_default()
}

/// The envelope's `code`, if the body is Feishu JSON.
pub(super) fn answer_code(body: &[u8]) -> Option<i64> {
    serde_json::from_slice::<Value>(body)
        .ok()?
        .get("code")?
        .as_i64()
}

/// The JSON of a Feishu answer (if it is JSON), its `code` and its `msg` (`no message`).
pub(crate) fn code_and_msg(body: &[u8]) -> (Option<Value>, Option<i64>, String) {
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let code = parsed
        .as_ref()
        .and_then(|v| v.get("code"))
        .and_then(Value::as_i64);
    let msg = parsed
        .as_ref()
        .and_then(|v| v.get("msg"))
        .and_then(Value::as_str)
        .unwrap_or("no message")
        .to_owned();
    (parsed, code, msg)
}

/// Reads an Open API answer: the whole JSON when `code` is 0; else the error — HTTP 429
/// or code 99991400 rate limited (`x-ogw-ratelimit-reset` seconds, else 1), 5xx a
/// connection problem, an invalid token unauthorized, anything else `code N: msg`.
pub fn decode_answer(status: u16, reset: Option<u64>, body: &[u8]) -> Result<Value, ChannelError> {
    let (parsed, code, msg) = code_and_msg(body);
    if status == 429 || code == Some(RATE_LIMIT_CODE) {
        return Err(ChannelError::RateLimited {
            channel: CHANNEL.into(),
            retry_after_secs: reset.unwrap_or(1).clamp(1, 86_400),
        });
    }
    if status >= 500 {
        return Err(ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("HTTP {status}: {msg}"),
        });
    }
    match (code, parsed) {
        (Some(0), Some(value)) if (200..300).contains(&status) => Ok(value),
        (Some(code), _) if TOKEN_INVALID_CODES.contains(&code) => Err(ChannelError::Unauthorized {
            channel: CHANNEL.into(),
            message: format!("code {code}: {msg}"),
        }),
        (Some(code), _) => Err(api_error(format!("HTTP {status} (code {code}): {msg}"))),
        (None, _) => Err(ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("HTTP {status}: the answer is not Feishu JSON"),
        }),
    }
}

/// Reads the answer of `/callback/ws/endpoint`: code 514 or 403 is a refusal of the app
/// (credentials, or the long connection not enabled for it).
pub fn decode_endpoint(status: u16, body: &[u8]) -> Result<WsEndpoint, ChannelError> {
    let (parsed, code, msg) = code_and_msg(body);
    match code {
        Some(0) => {
            let data = parsed.as_ref().and_then(|v| v.get("data"));
            let url = data
                .and_then(|d| d.get("URL"))
                .and_then(Value::as_str)
                .filter(|u| u.starts_with("ws://") || u.starts_with("wss://"))
                .ok_or_else(|| api_error("the long-connection endpoint gave no ws URL".into()))?;
            Ok(WsEndpoint {
                url: url.to_owned(),
                ping_interval: data
                    .and_then(|d| d.pointer("/ClientConfig/PingInterval"))
                    .and_then(Value::as_u64),
            })
        }
        Some(code @ (514 | 403)) => Err(ChannelError::Unauthorized {
            channel: CHANNEL.into(),
            message: format!(
                "long connection refused (code {code}: {msg}); check the app credentials and \
                 that events are received through the long connection"
            ),
        }),
        Some(code) if status == 429 || code == RATE_LIMIT_CODE => Err(ChannelError::RateLimited {
            channel: CHANNEL.into(),
            retry_after_secs: 5,
        }),
        Some(code) => Err(api_error(format!(
            "long-connection endpoint: code {code}: {msg}"
        ))),
        None => Err(ChannelError::Connection {
            channel: CHANNEL.into(),
            message: format!("HTTP {status}: the endpoint's answer is not Feishu JSON"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        let ok = decode_answer(
            200,
            None,
            br#"{"code":0,"msg":"success","data":{"message_id":"om_1"}}"#,
        )
        .unwrap();
        assert_eq!(sent_id(&ok), "om_1");
        assert!(matches!(
            decode_answer(200, Some(7), br#"{"code":99991400,"msg":"too many"}"#),
            Err(ChannelError::RateLimited {
                retry_after_secs: 7,
                ..
            })
        ));
        assert!(matches!(
            decode_answer(429, None, b"busy"),
            Err(ChannelError::RateLimited {
                retry_after_secs: 1,
                ..
            })
        ));
        assert!(matches!(
            decode_answer(503, None, b""),
            Err(ChannelError::Connection { .. })
        ));
        assert_eq!(
            decode_answer(200, None, br#"{"code":230002,"msg":"bot not in chat"}"#)
                .unwrap_err()
                .to_string(),
            "feishu: HTTP 200 (code 230002): bot not in chat"
        );
        assert!(matches!(
            decode_answer(400, None, br#"{"code":99991663,"msg":"invalid token"}"#),
            Err(ChannelError::Unauthorized { .. })
        ));
        assert!(matches!(
            decode_answer(200, None, b"<html>"),
            Err(ChannelError::Connection { .. })
        ));
    }

    #[test]
    fn endpoints() {
        let ok = decode_endpoint(
            200,
            br#"{"code":0,"msg":"ok","data":{"URL":"wss://h/ws/v2?service_id=33","ClientConfig":{"PingInterval":120}}}"#,
        )
        .unwrap();
        assert_eq!(
            ok,
            WsEndpoint {
                url: "wss://h/ws/v2?service_id=33".into(),
                ping_interval: Some(120)
            }
        );
        assert!(matches!(
            decode_endpoint(200, br#"{"code":514,"msg":"forbidden"}"#),
            Err(ChannelError::Unauthorized { .. })
        ));
        assert!(matches!(
            decode_endpoint(200, br#"{"code":403,"msg":"no"}"#),
            Err(ChannelError::Unauthorized { .. })
        ));
        assert!(matches!(
            decode_endpoint(200, br#"{"code":1,"msg":"busy"}"#),
            Err(ChannelError::Api { .. })
        ));
        assert!(decode_endpoint(200, br#"{"code":0,"data":{"URL":"http://x"}}"#).is_err());
        assert!(decode_endpoint(502, b"").is_err());
    }

    #[test]
    fn files_and_ids() {
        assert!(is_image("a.PNG"));
        assert!(!is_image("a.pdf"));
        assert_eq!(file_type_for("report.PDF"), "pdf");
        assert_eq!(file_type_for("notes.txt"), "stream");
        assert_eq!(file_type_for("noext"), "stream");
        assert_eq!(path_segment("om_1-a").unwrap(), "om_1-a");
        assert!(path_segment("../x").is_err());
        assert!(path_segment("").is_err());
    }
}
