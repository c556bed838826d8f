//! A small hand-written `multipart/form-data` parser (RFC 7578, CRLF line breaks) shared by
//! the fake servers' upload methods: axum's multipart support needs `multer`, which the
//! workspace does not have. Malformed bodies are errors, never panics.

use bytes::Bytes;

/// `multipart/form-data; boundary=x` -> `Some("x")`; `None` for other content types.
pub(crate) fn boundary(content_type: &str) -> Option<String> {
    let mut pieces = content_type.split(';');
    let mime = pieces.next().unwrap_or("").trim();
    if !mime.eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    pieces
        .find_map(|piece| {
            let (key, value) = piece.split_once('=')?;
            key.trim()
                .eq_ignore_ascii_case("boundary")
                .then(|| value.trim().trim_matches('"').to_owned())
        })
        .filter(|boundary| !boundary.is_empty())
}

/// One part of a multipart body.
#[derive(Debug)]
pub(crate) struct Part {
    pub name: String,
    pub file_name: Option<String>,
    pub content_type: Option<String>,
    pub data: Bytes,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Parses a `multipart/form-data` body (RFC 7578, CRLF line breaks).
pub(crate) fn parse(body: &Bytes, boundary: &str) -> Result<Vec<Part>, String> {
    let malformed = || "malformed multipart body".to_owned();
    let delimiter = format!("--{boundary}");
    let close = format!("\r\n--{boundary}");
    let start = find(body, delimiter.as_bytes()).ok_or_else(malformed)?;
    let mut pos = start + delimiter.len();
    let mut parts = Vec::new();
    loop {
        let rest = body.get(pos..).ok_or_else(malformed)?;
        if rest.starts_with(b"--") {
            return Ok(parts);
        }
        // Transport padding, then the line break ending the delimiter line.
        let padding = rest
            .iter()
            .take_while(|b| **b == b' ' || **b == b'\t')
            .count();
        let rest = rest.get(padding..).ok_or_else(malformed)?;
        if !rest.starts_with(b"\r\n") {
            return Err(malformed());
        }
        pos += padding + 2;
        let rest = body.get(pos..).ok_or_else(malformed)?;
        let (headers, data_start) = if rest.starts_with(b"\r\n") {
            (&rest[..0], pos + 2)
        } else {
            let end = find(rest, b"\r\n\r\n").ok_or_else(malformed)?;
            (rest.get(..end).ok_or_else(malformed)?, pos + end + 4)
        };
        let headers = String::from_utf8_lossy(headers).into_owned();
        let data_rest = body.get(data_start..).ok_or_else(malformed)?;
        let data_len = find(data_rest, close.as_bytes()).ok_or_else(malformed)?;
        let data = body.slice(data_start..data_start + data_len);
        pos = data_start + data_len + close.len();

        let mut name = None;
        let mut file_name = None;
        let mut content_type = None;
        for line in headers.split("\r\n") {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim();
            if key.eq_ignore_ascii_case("content-disposition") {
                for (param, value) in header_params(value) {
                    match param.as_str() {
                        "name" => name = Some(value),
                        "filename" if file_name.is_none() => file_name = Some(value),
                        "filename*" => file_name = Some(decode_ext_value(&value)),
                        _ => {}
                    }
                }
            } else if key.eq_ignore_ascii_case("content-type") {
                content_type = Some(value.trim().to_owned());
            }
        }
        let name = name.ok_or("multipart part without a name")?;
        parts.push(Part {
            name,
            file_name,
            content_type,
            data,
        });
    }
}

/// `form-data; name="a"; filename="b;c.txt"` -> `[("name","a"), ("filename","b;c.txt")]`
/// (the first token, the disposition type, is skipped; quoted values may contain `;`).
fn header_params(value: &str) -> Vec<(String, String)> {
    let mut segments = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let mut chars = value.chars().peekable();
    while let Some(ch) = chars.next() {
        // Only `\"` is an escape: clients rarely escape, so other backslashes are literal.
        if quoted && ch == '\\' && chars.peek() == Some(&'"') {
            current.push('"');
            chars.next();
        } else if ch == '"' {
            quoted = !quoted;
        } else if ch == ';' && !quoted {
            segments.push(std::mem::take(&mut current));
        } else {
            current.push(ch);
        }
    }
    segments.push(current);
    segments
        .into_iter()
        .skip(1)
        .filter_map(|segment| {
            let (key, value) = segment.split_once('=')?;
            Some((key.trim().to_ascii_lowercase(), value.trim().to_owned()))
        })
        .collect()
}

/// RFC 5987 `UTF-8''na%C3%AFve.txt` -> `naïve.txt`.
pub(crate) fn decode_ext_value(value: &str) -> String {
    let encoded = value.splitn(3, '\'').nth(2).unwrap_or(value);
    percent_decode(encoded)
}

/// Decodes `%XX` escapes (invalid escapes are kept as they are; invalid UTF-8 is replaced).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(value) = u8::from_str_radix(hex, 16)
        {
            out.push(value);
            i += 3;
            continue;
        }
        out.push(byte);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_files() {
        let body = Bytes::from_static(
            b"--XyZ\r\nContent-Disposition: form-data; name=\"payload_json\"\r\n\r\n{}\r\n\
--XyZ\r\nContent-Disposition: form-data; name=\"files[0]\"; filename=\"a;b.txt\"\r\n\
Content-Type: text/plain\r\n\r\nline1\r\nline2\r\n--XyZ--\r\n",
        );
        let found = boundary("multipart/form-data; boundary=\"XyZ\"").unwrap();
        let parts = parse(&body, &found).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].name, "payload_json");
        assert_eq!(parts[1].name, "files[0]");
        assert_eq!(parts[1].file_name.as_deref(), Some("a;b.txt"));
        assert_eq!(&parts[1].data[..], b"line1\r\nline2");
        assert!(parse(&Bytes::from_static(b"--XyZ\r\n\r\nno end"), "XyZ").is_err());
        assert_eq!(boundary("application/json"), None);
    }
}
