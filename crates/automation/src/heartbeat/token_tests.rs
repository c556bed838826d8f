//! The `HEARTBEAT_OK` rules case by case: OpenClaw's own test cases plus the edges its
//! code implies (wrappers, punctuation, limits), and the delivery guarantees Pincer adds.

use super::*;

const HB: StripMode = StripMode::Heartbeat {
    ack_max_chars: DEFAULT_ACK_MAX_CHARS,
};
const MSG: StripMode = StripMode::Message;

fn skip(did_strip: bool) -> StripResult {
    StripResult::skip(did_strip)
}

fn keep(text: &str, did_strip: bool) -> StripResult {
    StripResult::keep(text, did_strip)
}

#[test]
fn strip_heartbeat_token_matches_openclaw_case_by_case() {
    let long = "A".repeat(DEFAULT_ACK_MAX_CHARS + 1);
    let exactly = "A".repeat(DEFAULT_ACK_MAX_CHARS);
    let long_then_token = format!("{long} HEARTBEAT_OK");
    let exactly_then_token = format!("{exactly} HEARTBEAT_OK");
    let cases: Vec<(&str, &str, StripMode, StripResult)> = vec![
        ("empty", "", HB, skip(false)),
        ("whitespace only", " \n\t ", HB, skip(false)),
        (
            "no token is kept",
            " all quiet \n",
            HB,
            keep("all quiet", false),
        ),
        ("token only", HEARTBEAT_OK, HB, skip(true)),
        ("token with spaces", "  HEARTBEAT_OK \n", HB, skip(true)),
        (
            "token repeated",
            "HEARTBEAT_OK HEARTBEAT_OK",
            HB,
            skip(true),
        ),
        ("small junk after", "HEARTBEAT_OK 🦞", HB, skip(true)),
        ("small junk before", "🦞 HEARTBEAT_OK", HB, skip(true)),
        ("short remainder", "ALERT HEARTBEAT_OK", HB, skip(true)),
        (
            "remainder at the limit",
            &exactly_then_token,
            HB,
            skip(true),
        ),
        ("long remainder", &long_then_token, HB, keep(&long, true)),
        ("html bold", "<b>HEARTBEAT_OK</b>", HB, skip(true)),
        ("markdown bold", "**HEARTBEAT_OK**", HB, skip(true)),
        ("code span", "`HEARTBEAT_OK`", HB, skip(true)),
        ("nbsp entity", "&nbsp;HEARTBEAT_OK&nbsp;", HB, skip(true)),
        ("trailing dot", "HEARTBEAT_OK.", HB, skip(true)),
        ("trailing bangs", "HEARTBEAT_OK!!!", HB, skip(true)),
        ("trailing dashes", "HEARTBEAT_OK---", HB, skip(true)),
        (
            "start, message mode",
            "HEARTBEAT_OK hello",
            MSG,
            keep("hello", true),
        ),
        (
            "end, message mode",
            "hello HEARTBEAT_OK",
            MSG,
            keep("hello", true),
        ),
        (
            "middle is untouched",
            "hello HEARTBEAT_OK there",
            MSG,
            keep("hello HEARTBEAT_OK there", false),
        ),
        (
            "code tag then text",
            "<code>HEARTBEAT_OK</code> all good",
            MSG,
            keep("all good", true),
        ),
        (
            "punctuation stays with the sentence",
            "I should not respond HEARTBEAT_OK.",
            MSG,
            keep("I should not respond.", true),
        ),
        (
            "text's own punctuation kept",
            "All clear. HEARTBEAT_OK",
            MSG,
            keep("All clear.", true),
        ),
        (
            "five trailing chars are not an edge",
            "ok HEARTBEAT_OK!!!!!",
            MSG,
            keep("ok HEARTBEAT_OK!!!!!", false),
        ),
        (
            "junk after a leading token is kept",
            "HEARTBEAT_OK!!!!! ok",
            MSG,
            keep("!!!!! ok", true),
        ),
        (
            "token glued to a word is not stripped at the end",
            "see HEARTBEAT_OKAY",
            MSG,
            keep("see HEARTBEAT_OKAY", false),
        ),
        (
            "whitespace inside collapses",
            "HEARTBEAT_OK\n\nline one\n\n  line two",
            MSG,
            keep("line one line two", true),
        ),
        ("token only, message mode", "HEARTBEAT_OK", MSG, skip(true)),
        (
            "markdown wrapper kept by OpenClaw in message mode",
            "**HEARTBEAT_OK**",
            MSG,
            keep("****", true),
        ),
        (
            "ack limit zero",
            "ok HEARTBEAT_OK",
            StripMode::Heartbeat { ack_max_chars: 0 },
            keep("ok", true),
        ),
    ];
    assert!(cases.len() >= 20);
    for (name, input, mode, want) in cases {
        assert_eq!(
            strip_heartbeat_token_with(input, mode),
            want,
            "case {name:?}"
        );
    }
}

#[test]
fn the_heartbeat_helper_uses_the_given_limit() {
    assert!(strip_heartbeat_token("abc HEARTBEAT_OK", 3).should_skip);
    assert_eq!(strip_heartbeat_token("abcd HEARTBEAT_OK", 3).text, "abcd");
    // UTF-16 units, as OpenClaw counts: the lobster is two.
    assert!(!strip_heartbeat_token("🦞 HEARTBEAT_OK", 1).should_skip);
}

#[test]
fn sanitized_text_never_holds_the_token() {
    let cases = [
        ("HEARTBEAT_OK", None),
        ("  ", None),
        ("**HEARTBEAT_OK**", None),
        ("<b>HEARTBEAT_OK</b>", None),
        ("HEARTBEAT_OK.", None),
        ("hello HEARTBEAT_OK there", Some("hello there")),
        ("Done. HEARTBEAT_OK", Some("Done.")),
        ("line\nHEARTBEAT_OK\nnext", Some("line\n\nnext")),
        ("plain reply", Some("plain reply")),
        ("👍", Some("👍")),
    ];
    for (input, want) in cases {
        let got = sanitize_for_delivery(input);
        assert_eq!(got.as_deref(), want, "input {input:?}");
        assert!(!got.unwrap_or_default().contains(HEARTBEAT_OK));
    }
}

#[test]
fn heartbeat_replies_are_judged_by_kind() {
    let short = "Tests passed. HEARTBEAT_OK";
    assert_eq!(
        heartbeat_reply_delivery(short, PromptKind::Heartbeat, 300),
        None
    );
    assert_eq!(
        heartbeat_reply_delivery(short, PromptKind::CronEvent, 300),
        None
    );
    assert_eq!(
        heartbeat_reply_delivery(short, PromptKind::ExecEvent, 300).as_deref(),
        Some("Tests passed.")
    );
    assert_eq!(
        heartbeat_reply_delivery("HEARTBEAT_OK", PromptKind::ExecEvent, 300),
        None
    );
    assert_eq!(
        heartbeat_reply_delivery("", PromptKind::ExecEvent, 300),
        None
    );
    assert_eq!(
        heartbeat_reply_delivery("Disk is 95% full.", PromptKind::Heartbeat, 300).as_deref(),
        Some("Disk is 95% full.")
    );
    let long = format!(
        "{} HEARTBEAT_OK in the middle is removed too",
        "x".repeat(300)
    );
    let sent = heartbeat_reply_delivery(&long, PromptKind::Heartbeat, 300).unwrap_or_default();
    assert!(!sent.is_empty() && !sent.contains(HEARTBEAT_OK));
}
