//! Method parameters as Telegram accepts them: the query string, then a JSON,
//! `application/x-www-form-urlencoded` or `multipart/form-data` body (body fields win), and a
//! small hand-written multipart parser (axum's needs `multer`, which the workspace lacks).

use std::collections::HashMap;

use bytes::Bytes;

pub(crate) use crate::multipart::percent_decode;
use serde_json::{Map, Value, json};

/// An uploaded file part.
#[derive(Debug, Clone)]
pub(crate) struct Upload {
    pub file_name: Option<String>,
    pub content_type: Option<String>,
    pub data: Bytes,
}

/// The parameters of one call.
#[derive(Debug, Default)]
pub(crate) struct Params {
    pub fields: Map<String, Value>,
    pub files: HashMap<String, Upload>,
}

impl Params {
    /// Parses the query string and the body according to `content_type`.
    pub fn parse(
        query: Option<&str>,
        content_type: Option<&str>,
        body: &Bytes,
    ) -> Result<Self, String> {
        let mut params = Self::default();
        if let Some(query) = query {
            for (key, value) in form_urlencoded::parse(query.as_bytes()) {
                params
                    .fields
                    .insert(key.into_owned(), Value::String(value.into_owned()));
            }
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(params);
        }
        let (mime, boundary) = split_content_type(content_type.unwrap_or(""));
        match mime.as_str() {
            "application/x-www-form-urlencoded" => {
                for (key, value) in form_urlencoded::parse(body) {
                    params
                        .fields
                        .insert(key.into_owned(), Value::String(value.into_owned()));
                }
            }
            "multipart/form-data" => {
                let boundary = boundary.ok_or("multipart body without a boundary")?;
                for part in crate::multipart::parse(body, &boundary)? {
                    if part.file_name.is_some() {
                        params.files.insert(
                            part.name,
                            Upload {
                                file_name: part.file_name,
                                content_type: part.content_type,
                                data: part.data,
                            },
                        );
                    } else {
                        let text = String::from_utf8_lossy(&part.data).into_owned();
                        params.fields.insert(part.name, Value::String(text));
                    }
                }
            }
            // JSON, or no/unknown content type with a body that looks like JSON.
            _ => match serde_json::from_slice::<Value>(body) {
                Ok(Value::Object(map)) => params.fields.extend(map),
                Ok(_) => return Err("the JSON body must be an object".to_owned()),
                Err(err) => return Err(format!("can't parse JSON body: {err}")),
            },
        }
        Ok(params)
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.fields.get(name).filter(|value| !value.is_null())
    }

    /// A string parameter (numbers and booleans are rendered).
    pub fn str(&self, name: &str) -> Option<String> {
        match self.get(name)? {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            Value::Bool(flag) => Some(flag.to_string()),
            _ => None,
        }
    }

    /// An integer parameter; `Err` when present but not an integer.
    pub fn int(&self, name: &str) -> Result<Option<i64>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Number(number)) => number
                .as_i64()
                .map(Some)
                .ok_or_else(|| format!("invalid {name} specified")),
            Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
            Some(Value::String(text)) => text
                .trim()
                .parse()
                .map(Some)
                .map_err(|_| format!("invalid {name} specified")),
            Some(_) => Err(format!("invalid {name} specified")),
        }
    }

    pub fn bool(&self, name: &str) -> bool {
        match self.get(name) {
            Some(Value::Bool(flag)) => *flag,
            Some(Value::String(text)) => matches!(text.as_str(), "true" | "True" | "1"),
            Some(Value::Number(number)) => number.as_i64().is_some_and(|n| n != 0),
            _ => false,
        }
    }

    /// A structured parameter: JSON as is, or a string holding JSON (form and multipart).
    pub fn json(&self, name: &str) -> Result<Option<Value>, String> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(text)) => serde_json::from_str(text)
                .map(Some)
                .map_err(|_| format!("can't parse {name} JSON object")),
            Some(value) => Ok(Some(value.clone())),
        }
    }

    /// The fields plus a `{"upload": name, "size": n}` summary per file, for the call log.
    pub fn summary(&self) -> Value {
        let mut map = self.fields.clone();
        for (name, upload) in &self.files {
            map.insert(
                name.clone(),
                json!({"upload": upload.file_name, "size": upload.data.len()}),
            );
        }
        Value::Object(map)
    }
}

/// `multipart/form-data; boundary=x` -> (`multipart/form-data`, `Some("x")`).
fn split_content_type(value: &str) -> (String, Option<String>) {
    let mut pieces = value.split(';');
    let mime = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
    let boundary = pieces.find_map(|piece| {
        let (key, value) = piece.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("boundary")
            .then(|| value.trim().trim_matches('"').to_owned())
    });
    (mime, boundary.filter(|b| !b.is_empty()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::multipart::decode_ext_value;

    #[test]
    fn multipart_fields_and_file() {
        let body = Bytes::from_static(
            b"preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n42\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"document\"; filename=\"a;b\\c.txt\"\r\n\
Content-Type: text/plain\r\n\r\nline1\r\nline2\r\n--XyZ--\r\n",
        );
        let params = Params::parse(
            Some("caption=hi"),
            Some("multipart/form-data; boundary=\"XyZ\""),
            &body,
        )
        .unwrap();
        assert_eq!(params.int("chat_id").unwrap(), Some(42));
        assert_eq!(params.str("caption").as_deref(), Some("hi"));
        let file = &params.files["document"];
        assert_eq!(file.file_name.as_deref(), Some("a;b\\c.txt"));
        assert_eq!(file.content_type.as_deref(), Some("text/plain"));
        assert_eq!(&file.data[..], b"line1\r\nline2");
    }

    #[test]
    fn malformed_multipart_is_an_error() {
        let body = Bytes::from_static(
            b"--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno end",
        );
        assert!(Params::parse(None, Some("multipart/form-data; boundary=XyZ"), &body).is_err());
        assert!(Params::parse(None, Some("multipart/form-data"), &body).is_err());
    }

    #[test]
    fn form_and_json() {
        let form = Params::parse(
            None,
            Some("application/x-www-form-urlencoded"),
            &Bytes::from_static(
                b"chat_id=-100&text=a+b%21&reply_parameters=%7B%22message_id%22%3A3%7D",
            ),
        )
        .unwrap();
        assert_eq!(form.int("chat_id").unwrap(), Some(-100));
        assert_eq!(form.str("text").as_deref(), Some("a b!"));
        assert_eq!(
            form.json("reply_parameters").unwrap().unwrap()["message_id"],
            3
        );
        let json = Params::parse(
            None,
            None,
            &Bytes::from_static(br#"{"chat_id": 5, "text": "x"}"#),
        )
        .unwrap();
        assert_eq!(json.int("chat_id").unwrap(), Some(5));
        assert!(Params::parse(None, None, &Bytes::from_static(b"[1]")).is_err());
        assert!(json.int("text").is_err());
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("123456%3ATEST"), "123456:TEST");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(decode_ext_value("UTF-8''na%C3%AFve.txt"), "naïve.txt");
    }
}
