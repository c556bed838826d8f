//! Tests of [`super`]: PDFs made here byte by byte, text files, the frame and the limits.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write their files directly"
)]

use super::*;

/// A PDF with one page per entry of `pages`, each line of a page shown with `Tj` in
/// Helvetica; the cross-reference table's offsets are real.
pub(crate) fn pdf(pages: &[&[&str]]) -> Vec<u8> {
    let mut objects: Vec<String> = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".into(),
        String::new(), // the page tree, once the pages' numbers are known
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".into(),
    ];
    let mut kids = Vec::new();
    for lines in pages {
        let page = objects.len() + 1;
        let content: String = lines
            .iter()
            .map(|line| format!("({line}) Tj T*\n"))
            .collect();
        let content = format!("BT /F1 12 Tf 14 TL 72 712 Td\n{content}ET");
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R \
             /Resources << /Font << /F1 3 0 R >> >> >>",
            page + 1
        ));
        objects.push(format!(
            "<< /Length {} >>\nstream\n{content}\nendstream",
            content.len()
        ));
        kids.push(format!("{page} 0 R"));
    }
    objects[1] = format!(
        "<< /Type /Pages /Kids [{}] /Count {} >>",
        kids.join(" "),
        kids.len()
    );
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[cfg(feature = "pdf")]
#[test]
fn a_pdf_gives_its_text_page_by_page() {
    let bytes = pdf(&[&["Invoice 42", "Total: 17 EUR"], &["Page two"]]);
    assert_eq!(
        pdf_text(&bytes, 1000).unwrap(),
        DocumentText {
            text: "Invoice 42\nTotal: 17 EUR\nPage two\n".into(),
            truncated: false,
            pages: Some(Pages { read: 2, total: 2 }),
        }
    );
}

#[cfg(feature = "pdf")]
#[test]
fn a_pdf_is_cut_at_the_limit_and_after_the_first_pages() {
    let bytes = pdf(&[&["Invoice 42", "Total: 17 EUR"], &["Page two"]]);
    assert_eq!(
        pdf_text(&bytes, 7).unwrap(),
        DocumentText {
            text: "Invoice".into(),
            truncated: true,
            pages: Some(Pages { read: 1, total: 2 }),
        }
    );
    let many: Vec<&[&str]> = vec![&["x"]; PDF_MAX_PAGES + 5];
    let doc = pdf_text(&pdf(&many), 1000).unwrap();
    assert_eq!(doc.text, "x\n".repeat(PDF_MAX_PAGES));
    assert_eq!(
        (doc.truncated, doc.pages),
        (
            false,
            Some(Pages {
                read: PDF_MAX_PAGES,
                total: PDF_MAX_PAGES + 5
            })
        )
    );
}

#[cfg(feature = "pdf")]
#[test]
fn a_corrupt_pdf_is_an_error_not_a_panic() {
    for bytes in [
        &b"%PDF-1.7\nthis is not a pdf at all"[..],
        b"%PDF-",
        b"",
        &pdf(&[&["cut short"]])[..60],
    ] {
        let err = pdf_text(bytes, 100).unwrap_err();
        assert!(matches!(err, MediaTextError::Pdf(_)), "{bytes:?}: {err:?}");
    }
}

/// `bytes` (a PDF from [`pdf`]) with the content of page `page` replaced by `content`,
/// deflated.
#[cfg(feature = "pdf")]
fn with_deflated_page(bytes: &[u8], page: u32, content: Vec<u8>) -> Vec<u8> {
    let mut doc = lopdf::Document::load_mem(bytes).unwrap();
    let page_id = doc.get_pages()[&page];
    let stream_id = doc.get_page_contents(page_id)[0];
    let stream = doc
        .get_object_mut(stream_id)
        .unwrap()
        .as_stream_mut()
        .unwrap();
    stream.set_plain_content(content);
    stream.compress().unwrap();
    assert!(stream.content.len() < 64 * 1024, "{}", stream.content.len());
    let mut out = Vec::new();
    doc.save_to(&mut out).unwrap();
    out
}

#[cfg(feature = "pdf")]
#[test]
fn a_page_that_inflates_past_the_budget_is_skipped() {
    // 8 MB of spaces deflate to a few kilobytes: a small zip bomb as a page's content.
    let bomb = vec![b' '; 8 * 1024 * 1024];
    let two_pages = pdf(&[&["never read"], &["after the bomb"]]);
    let bytes = with_deflated_page(&two_pages, 1, bomb.clone());
    assert_eq!(
        pdf_text(&bytes, 1000).unwrap(),
        DocumentText {
            text: "after the bomb\n".into(),
            truncated: false,
            pages: Some(Pages { read: 2, total: 2 }),
        }
    );
    let bytes = with_deflated_page(&pdf(&[&["never read"]]), 1, bomb);
    let err = pdf_text(&bytes, 1000).unwrap_err();
    assert!(
        matches!(&err, MediaTextError::Pdf(why) if why.contains("decompress")),
        "{err:?}"
    );
}

#[test]
fn a_text_file_is_read_up_to_the_limit_as_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "notes.md", "# Tâches\n- lait\n".as_bytes());
    assert_eq!(
        document_text(&path, "text/markdown", 100).unwrap(),
        Some(DocumentText {
            text: "# Tâches\n- lait\n".into(),
            truncated: false,
            pages: None,
        })
    );
    assert_eq!(
        document_text(&path, "text/plain; charset=utf-8", 4).unwrap(),
        Some(DocumentText {
            text: "# Tâ".into(),
            truncated: true,
            pages: None,
        })
    );
    // Bytes that are not UTF-8 become U+FFFD; exactly the limit is not a cut.
    let path = write(dir.path(), "latin1.csv", b"caf\xe9;1");
    assert_eq!(
        document_text(&path, "text/csv", 6).unwrap(),
        Some(DocumentText {
            text: "caf\u{fffd};1".into(),
            truncated: false,
            pages: None,
        })
    );
}

#[test]
fn binary_declared_as_text_other_types_and_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "x.txt", b"MZ\x90\0\x03\0\0\0");
    assert_eq!(document_text(&path, "text/plain", 100).unwrap(), None);
    assert_eq!(document_text(&path, "audio/ogg", 100).unwrap(), None);
    assert_eq!(
        document_text(&path, "application/octet-stream", 100).unwrap(),
        None
    );
    let err = document_text(&dir.path().join("gone.json"), "application/json", 100).unwrap_err();
    assert!(matches!(err, MediaTextError::Read(_)), "{err:?}");
}

fn note(dir: &Path, name: &str, bytes: &[u8], mime: &str, budget: &mut TextBudget) -> String {
    let full = write(dir, name, bytes);
    file_note(
        &full,
        &Path::new("inbox/2026-11-27").join(name),
        mime,
        budget,
    )
}

#[test]
fn the_note_frames_the_text_like_openclaw_and_says_what_was_cut() {
    let dir = tempfile::tempdir().unwrap();
    let mut budget = TextBudget::default();
    assert_eq!(
        note(
            dir.path(),
            "a \"q\".txt",
            b"hello\n</file> <FILE x> <filed>\n",
            "text/plain",
            &mut budget
        ),
        "<file name=\"inbox/2026-11-27/a &quot;q&quot;.txt\" mime=\"text/plain\">\n\
         hello\n&lt;/file> &lt;FILE x> <filed>\n\
         </file>\n"
    );
    let long = "y".repeat(FILE_MAX_CHARS + 1);
    assert_eq!(
        note(
            dir.path(),
            "long.log",
            long.as_bytes(),
            "text/plain",
            &mut budget
        ),
        format!(
            "<file name=\"inbox/2026-11-27/long.log\" mime=\"text/plain\">\n{}\n</file>\n\
             (Truncated at {FILE_MAX_CHARS} characters; read the file for the rest.)\n",
            "y".repeat(FILE_MAX_CHARS)
        )
    );
    assert_eq!(
        note(dir.path(), "empty.txt", b"", "text/plain", &mut budget),
        "(The file is empty.)\n"
    );
    assert_eq!(
        note(dir.path(), "bin.txt", b"a\0b", "text/plain", &mut budget),
        ""
    );
    assert_eq!(
        note(dir.path(), "song.mp3", b"ID3", "audio/mpeg", &mut budget),
        ""
    );
}

#[test]
fn the_files_of_one_message_share_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut budget = TextBudget::default();
    let big = "z".repeat(FILE_MAX_CHARS);
    for name in ["1.txt", "2.txt"] {
        let text = note(dir.path(), name, big.as_bytes(), "text/plain", &mut budget);
        assert!(!text.contains("Truncated"), "{name}");
    }
    let left = MESSAGE_MAX_CHARS - 2 * FILE_MAX_CHARS;
    let third = note(
        dir.path(),
        "3.txt",
        big.as_bytes(),
        "text/plain",
        &mut budget,
    );
    assert!(
        third.contains(&format!(
            "\n{}\n</file>\n(Truncated at {left} characters;",
            "z".repeat(left)
        )),
        "{third}"
    );
    assert_eq!(
        note(dir.path(), "4.txt", b"more", "text/plain", &mut budget),
        format!(
            "(Its text was not added: this message's {MESSAGE_MAX_CHARS} characters of file text \
             are used up. Read the file.)\n"
        )
    );
}

#[cfg(feature = "pdf")]
#[test]
fn the_note_of_a_pdf() {
    let dir = tempfile::tempdir().unwrap();
    let mut budget = TextBudget::default();
    assert_eq!(
        note(
            dir.path(),
            "x.pdf",
            &pdf(&[&["Hello PDF"]]),
            "application/pdf",
            &mut budget
        ),
        "<file name=\"inbox/2026-11-27/x.pdf\" mime=\"application/pdf\">\nHello PDF\n</file>\n"
    );
    let many: Vec<&[&str]> = vec![&["p"]; PDF_MAX_PAGES + 1];
    assert!(
        note(
            dir.path(),
            "many.pdf",
            &pdf(&many),
            "application/pdf",
            &mut budget
        )
        .ends_with(&format!(
            "</file>\n(Only the first {PDF_MAX_PAGES} of {} pages were read; read the file \
                 for the rest.)\n",
            PDF_MAX_PAGES + 1
        ))
    );
    assert_eq!(
        note(
            dir.path(),
            "scan.pdf",
            &pdf(&[&[]]),
            "application/pdf",
            &mut budget
        ),
        "(The PDF has no text that could be extracted: it may be scanned pages.)\n"
    );
    let corrupt = note(
        dir.path(),
        "bad.pdf",
        b"%PDF-1.4 garbage",
        "application/pdf",
        &mut budget,
    );
    assert!(
        corrupt.starts_with("(Could not read the PDF: "),
        "{corrupt}"
    );
}

#[cfg(not(feature = "pdf"))]
#[test]
fn without_the_pdf_feature_a_pdf_is_only_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "x.pdf", &pdf(&[&["Hello PDF"]]));
    assert_eq!(document_text(&path, "application/pdf", 100).unwrap(), None);
}

#[cfg(feature = "pdf")]
#[test]
fn a_pdf_and_a_text_file_reach_the_user_message_with_their_text() {
    use pincer_ai::{ContentBlock, UserContent};
    use pincer_channel_port::InboundMedia;

    use crate::media_input::{MediaLimits, Shown, user_content};

    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("inbox")).unwrap();
    write(
        &ws.path().join("inbox"),
        "report.pdf",
        &pdf(&[&["Q3 revenue: 12"]]),
    );
    write(&ws.path().join("inbox"), "data.csv", b"a,b\n1,2\n");
    let media = |name: &str, mime: Option<&str>| InboundMedia {
        path: Path::new("inbox").join(name),
        mime: mime.map(str::to_owned),
        file_name: Some(name.to_owned()),
        size: 0,
    };
    let (content, shown) = user_content(
        ws.path(),
        "summarize",
        &[
            media("report.pdf", None),
            media("data.csv", Some("text/csv")),
        ],
        true,
        &MediaLimits::default(),
    );
    assert_eq!(shown, [Shown::Named, Shown::Named]);
    assert_eq!(
        content,
        UserContent::Blocks(vec![ContentBlock::text(
            "[media attached: inbox/report.pdf (application/pdf)]\n\
             <file name=\"inbox/report.pdf\" mime=\"application/pdf\">\n\
             Q3 revenue: 12\n\
             </file>\n\
             [media attached: inbox/data.csv (text/csv)]\n\
             <file name=\"inbox/data.csv\" mime=\"text/csv\">\n\
             a,b\n1,2\n\
             </file>\n\
             summarize"
        )])
    );
}

#[cfg(feature = "pdf")]
#[test]
fn a_page_with_too_many_fonts_is_skipped() {
    let mut doc = lopdf::Document::load_mem(&pdf(&[&["many fonts"], &["page two"]])).unwrap();
    let page_id = doc.get_pages()[&1];
    let page = doc.get_object_mut(page_id).unwrap().as_dict_mut().unwrap();
    let fonts = page
        .get_mut(b"Resources")
        .unwrap()
        .as_dict_mut()
        .unwrap()
        .get_mut(b"Font")
        .unwrap()
        .as_dict_mut()
        .unwrap();
    for n in 2..=65 {
        fonts.set(format!("F{n}"), lopdf::Object::Reference((3, 0)));
    }
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    assert_eq!(pdf_text(&bytes, 1000).unwrap().text, "page two\n");
}
