//! A PDF's text with `lopdf`, bounded so that a hostile file costs a known amount: the file is
//! at most [`super::PDF_MAX_BYTES`] (checked by the caller); no stream inflates past
//! [`STREAM_MAX_BYTES`] (lopdf refuses it: a zip bomb fails, it does not fill memory); at
//! most [`MAX_OBJECT_STREAMS`] object streams are unpacked while loading (so at most
//! `MAX_OBJECT_STREAMS × STREAM_MAX_BYTES` bytes are ever inflated at load, whatever the
//! file); the objects kept are at most about [`OBJECTS_MAX_BYTES`]; only the first
//! [`super::PDF_MAX_PAGES`] pages are decoded, with at most [`PAGES_CONTENT_MAX_BYTES`] of
//! content and [`CMAPS_MAX_BYTES`] of fonts' `ToUnicode` maps in all, from pages of at most
//! [`MAX_FONTS_PER_PAGE`] fonts (a page past a budget is skipped). Every step is then linear
//! in a bounded input, so a call ends: a hostile file takes about a second in a release build.
//!
//! lopdf may still panic on input it does not expect: [`text`] turns a panic into
//! [`MediaTextError::Panicked`].

use std::cell::Cell;
use std::collections::HashSet;
use std::panic::AssertUnwindSafe;

use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};

use super::{DocumentText, MediaTextError, PDF_MAX_PAGES, Pages, cut_chars};

/// How far one stream may inflate (object, cross-reference and a page's content streams).
/// Real ones are kilobytes to a few hundred; a scanned page's image is not decoded.
const STREAM_MAX_BYTES: usize = 4 * 1024 * 1024;
/// How many object streams are unpacked while loading (a 1000-page report has a few dozen).
const MAX_OBJECT_STREAMS: usize = 128;
/// About how many bytes of parsed objects are kept; the objects past it are dropped.
const OBJECTS_MAX_BYTES: usize = 128 * 1024 * 1024;
/// How much page content (drawing operators, inflated) is decoded for all the pages read:
/// decoding is the slow step (4 MB take about 0.3 s in a release build). A page of text is
/// some kilobytes.
const PAGES_CONTENT_MAX_BYTES: usize = 4 * 1024 * 1024;
/// How much of the fonts' `ToUnicode` maps (inflated) the pages read may use in all; lopdf
/// parses a page's maps again for every page, so this also bounds that.
const CMAPS_MAX_BYTES: usize = 4 * 1024 * 1024;
/// A page with more fonts than this is skipped (real ones have a handful).
const MAX_FONTS_PER_PAGE: usize = 64;

/// What the load of one PDF has left. Thread-local because lopdf's filter is a plain `fn`
/// (no state of its own); lopdf is built without its `rayon` feature, so it calls the filter
/// on the thread that loads, the thread [`extract`] resets this on first.
#[derive(Debug, Clone, Copy)]
struct LoadBudget {
    object_streams: usize,
    bytes: usize,
}

impl LoadBudget {
    const FULL: Self = Self {
        object_streams: MAX_OBJECT_STREAMS,
        bytes: OBJECTS_MAX_BYTES,
    };
}

thread_local! {
    static LOAD_BUDGET: Cell<LoadBudget> = const { Cell::new(LoadBudget::FULL) };
}

/// The text of the PDF `bytes`: at most `max_chars` characters of its first pages.
pub(super) fn text(bytes: &[u8], max_chars: usize) -> Result<DocumentText, MediaTextError> {
    // Sound to catch: the closure reads `bytes` and owns everything else it touches (the
    // document is built and dropped inside it), so a panic half-way leaves no broken state
    // behind that anyone sees afterwards; the one state outside it, LOAD_BUDGET, is reset at
    // the start of every call. The release profile unwinds (no `panic = "abort"`), so this
    // catches there too.
    std::panic::catch_unwind(AssertUnwindSafe(|| extract(bytes, max_chars)))
        .unwrap_or(Err(MediaTextError::Panicked))
}

fn extract(bytes: &[u8], max_chars: usize) -> Result<DocumentText, MediaTextError> {
    LOAD_BUDGET.set(LoadBudget::FULL);
    // A filter turns off lopdf's rebuild of a broken page tree; the budget is worth more than
    // that repair for files a stranger sends.
    let options = LoadOptions {
        filter: Some(within_budget),
        max_decompressed_size: Some(STREAM_MAX_BYTES),
        ..LoadOptions::default()
    };
    let doc = Document::load_mem_with_options(bytes, options).map_err(pdf_error)?;
    let pages = doc.get_pages();
    let mut text = String::new();
    let mut read = 0;
    let mut first_error = None;
    let mut decode = DecodeBudget {
        content: PAGES_CONTENT_MAX_BYTES,
        cmaps: CMAPS_MAX_BYTES,
        cmaps_seen: HashSet::new(),
    };
    for (&number, &page_id) in pages.iter().take(PDF_MAX_PAGES) {
        read += 1;
        if let Err(e) = decode.take_page(&doc, page_id) {
            first_error.get_or_insert(e);
            continue;
        }
        for chunk in doc.extract_text_chunks_with_limit(&[number], STREAM_MAX_BYTES) {
            match chunk {
                Ok(chunk) => text.push_str(&chunk),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if text.chars().count() > max_chars {
            break;
        }
    }
    // A page that fails is skipped when others have text; with none, the failure is the answer.
    if text.trim().is_empty()
        && let Some(e) = first_error
    {
        return Err(pdf_error(e));
    }
    let (kept, truncated) = cut_chars(&text, max_chars);
    Ok(DocumentText {
        text: kept.to_owned(),
        truncated,
        pages: Some(Pages {
            read,
            total: pages.len(),
        }),
    })
}

fn pdf_error(e: lopdf::Error) -> MediaTextError {
    MediaTextError::Pdf(pincer_base::error_chain(&e))
}

/// What decoding the pages has left: checked before lopdf decodes a page, since its text
/// extraction takes one limit per stream and none for a page's fonts.
struct DecodeBudget {
    content: usize,
    cmaps: usize,
    /// The `ToUnicode` maps already paid for (pages share fonts).
    cmaps_seen: HashSet<ObjectId>,
}

impl DecodeBudget {
    /// Pays for decoding the page `page_id`, or says why it is skipped. Costs an inflate of
    /// what it measures, which is fast next to decoding it.
    fn take_page(&mut self, doc: &Document, page_id: ObjectId) -> Result<(), lopdf::Error> {
        let over = |what: &str| lopdf::Error::InvalidStream(format!("{what} over the budget"));
        let fonts = doc.get_page_fonts(page_id)?;
        if fonts.len() > MAX_FONTS_PER_PAGE {
            return Err(over("a page's fonts are"));
        }
        for font in fonts.values() {
            let Ok(Object::Reference(id)) = font.get(b"ToUnicode") else {
                continue;
            };
            if !self.cmaps_seen.insert(*id) {
                continue;
            }
            let Ok(stream) = doc.get_object(*id).and_then(Object::as_stream) else {
                continue;
            };
            let size = stream
                .decompressed_content_with_limit(self.cmaps)
                .map_or(stream.content.len(), |map| map.len());
            if size > self.cmaps {
                self.cmaps = 0;
                return Err(over("the fonts' ToUnicode maps are"));
            }
            self.cmaps -= size;
        }
        let content = doc.get_page_content_with_limit(page_id, self.content)?;
        self.content -= content.len().min(self.content);
        Ok(())
    }
}

/// lopdf's load filter: keeps an object while the load's budget lasts.
fn within_budget(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    let mut budget = LOAD_BUDGET.get();
    // The filter sees an object stream before lopdf unpacks it, so refusing it here saves the
    // inflating too.
    if let Object::Stream(stream) = &*object
        && stream.dict.has_type(b"ObjStm")
    {
        if budget.object_streams == 0 {
            return None;
        }
        budget.object_streams -= 1;
    }
    let size = approx_size(object);
    if size > budget.bytes {
        budget.bytes = 0;
        LOAD_BUDGET.set(budget);
        return None;
    }
    budget.bytes -= size;
    LOAD_BUDGET.set(budget);
    // lopdf keeps the returned object for the members of an object stream and the one it
    // passed in for the others, so both must be the object.
    Some((id, object.clone()))
}

/// About how many bytes `object` takes in memory. Recursion is bounded: lopdf's parser
/// refuses objects nested deeper than 100.
fn approx_size(object: &Object) -> usize {
    const SLOT: usize = 32;
    match object {
        Object::Name(bytes) | Object::String(bytes, _) => SLOT + bytes.len(),
        Object::Array(items) => SLOT + items.iter().map(approx_size).sum::<usize>(),
        Object::Dictionary(dict) => dict_size(dict),
        Object::Stream(stream) => dict_size(&stream.dict) + stream.content.len(),
        _ => SLOT,
    }
}

fn dict_size(dict: &Dictionary) -> usize {
    const SLOT: usize = 48;
    SLOT + dict
        .iter()
        .map(|(key, value)| key.len() + approx_size(value))
        .sum::<usize>()
}
