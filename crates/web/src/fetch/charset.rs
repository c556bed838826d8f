//! Bytes to text: the charset comes from a byte-order mark, else the Content-Type's
//! `charset`, else (for HTML) a `<meta charset>` or `<meta http-equiv="Content-Type">` near
//! the top, else UTF-8 when the bytes are UTF-8 and Windows-1252 when they are not (what
//! browsers assume for an unlabelled page). Decoding never fails: bad bytes become U+FFFD.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};

/// How much of an HTML page is searched for a `<meta>` charset (browsers look at 1024
/// bytes; pages with long heads put it later, so a little more).
const META_PRESCAN_BYTES: usize = 4096;

/// Decoded text and the encoding that was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    pub text: String,
    /// The WHATWG name of the encoding (`UTF-8`, `windows-1252`, ...).
    pub encoding: &'static str,
    /// Whether some bytes were not valid in that encoding (and were replaced).
    pub had_errors: bool,
}

/// The `charset` parameter of a Content-Type (or `<meta content>`) value, unquoted.
pub fn charset_param(value: &str) -> Option<&str> {
    value.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(|c| c == '"' || c == '\''))
            .filter(|v| !v.is_empty())
    })
}

/// Decodes `body`; `content_type` is the response's header, `html` says whether to look for
/// a `<meta>` charset.
pub fn decode(body: &[u8], content_type: Option<&str>, html: bool) -> Decoded {
    let labelled = content_type
        .and_then(charset_param)
        .and_then(|label| Encoding::for_label(label.as_bytes()));
    let encoding = Encoding::for_bom(body)
        .map(|(encoding, _)| encoding)
        .or(labelled)
        .or_else(|| if html { meta_charset(body) } else { None })
        .unwrap_or_else(|| guess(body));
    // `decode` lets a BOM override the label and strips it.
    let (text, used, had_errors) = encoding.decode(body);
    Decoded {
        text: text.into_owned(),
        encoding: used.name(),
        had_errors,
    }
}

/// UTF-8 if the bytes are, else Windows-1252. A body that ends inside a UTF-8 character
/// (cut at the size cap) counts as UTF-8 when what comes before has UTF-8 characters of
/// more than one byte; an ASCII text ending in one high byte is more likely Latin.
fn guess(body: &[u8]) -> &'static Encoding {
    match std::str::from_utf8(body) {
        Ok(_) => UTF_8,
        Err(e) if e.error_len().is_none() && !body[..e.valid_up_to()].is_ascii() => UTF_8,
        Err(_) => WINDOWS_1252,
    }
}

/// The encoding a `<meta>` near the top of `body` names. The prefix is read as UTF-8 with
/// replacements (the markup around a charset declaration is ASCII in every encoding a
/// `<meta>` can name) and parsed with the same HTML parser as the page.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = String::from_utf8_lossy(&body[..body.len().min(META_PRESCAN_BYTES)]);
    let doc = dom_query::Document::from(head.as_ref());
    // Selector matching recurses too: a prefix nested absurdly deep names no charset.
    if super::extract::too_deep(&doc, super::extract::MAX_DEPTH) {
        return None;
    }
    let from_charset = doc
        .select("meta[charset]")
        .iter()
        .find_map(|meta| meta.attr("charset").map(|c| c.trim().to_owned()));
    let label = from_charset.or_else(|| {
        doc.select("meta[http-equiv][content]")
            .iter()
            .find_map(|meta| {
                let equiv = meta.attr("http-equiv")?;
                if !equiv.trim().eq_ignore_ascii_case("content-type") {
                    return None;
                }
                let content = meta.attr("content")?;
                charset_param(&content).map(str::to_owned)
            })
    })?;
    // A page cannot declare itself UTF-16 in ASCII markup; the HTML standard reads such a
    // declaration as UTF-8 (and `replacement` as itself is no use for text).
    Encoding::for_label(label.as_bytes()).map(Encoding::output_encoding)
}
