//! `MEDIA:<path>` lines in a reply (the Media Reply Protocol the system prompt teaches):
//! [`parse_media_lines`] splits a reply into the text to send and the files to attach.
//!
//! Only a line that starts with `MEDIA:` (after indentation) is a directive, so prose that
//! mentions the syntax mid-sentence stays text; inside a fenced code block it is never one,
//! because a model explaining the protocol shows it in code. The paths are returned as
//! written; [`check_media_paths`] then decides which may be sent, where the workspace and
//! the turn are known.
//!
//! What may be sent: a regular file inside the agent's workspace (after resolving
//! symlinks, so a link pointing out does not count), or a file in the system temp directory
//! that this turn made — owned by us, one link, and its inode changed (ctime) after the turn
//! began. ctime, not mtime: `touch -d`, `cp -p` or `tar x` can set an old mtime but not
//! ctime, so a file made during the turn is recognised and a file that was already there
//! (another program's, or a secret copied there earlier) is not. Tracking what the agent's
//! tools wrote would not be better: `exec` can write anywhere and is not tracked, and
//! `write` is confined to the workspace already. Nothing refused is opened or read; each is
//! named in a note that goes into the reply text.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The directive's prefix.
pub const MEDIA_PREFIX: &str = "MEDIA:";

/// Splits `reply` into its text without the `MEDIA:` lines and the paths they name, in
/// order. A path is trimmed and loses backticks and quotes around it; a directive with no
/// path is dropped (its line too). A reply without directives comes back unchanged;
/// otherwise the text is the remaining lines joined by `\n`, without blank lines at either
/// end and without the doubled blank line a removed line would leave.
pub fn parse_media_lines(reply: &str) -> (String, Vec<String>) {
    let mut kept: Vec<&str> = Vec::new();
    let mut paths = Vec::new();
    let mut fence: Option<Fence> = None;
    let mut removed_any = false;
    // Whether a directive was removed since the last kept line: a blank line that follows
    // then would double the blank line before the directive.
    let mut removed_since_kept = false;
    for line in reply.lines() {
        if let Some(open) = &fence {
            if open.is_closed_by(line) {
                fence = None;
            }
        } else if let Some(opened) = Fence::opened_by(line) {
            fence = Some(opened);
        } else if let Some(rest) = line.trim_start().strip_prefix(MEDIA_PREFIX) {
            let path = clean_path(rest);
            if !path.is_empty() {
                paths.push(path.to_owned());
            }
            removed_any = true;
            removed_since_kept = true;
            continue;
        }
        let blank = line.trim().is_empty();
        if blank && removed_since_kept && kept.last().is_some_and(|l| l.trim().is_empty()) {
            continue;
        }
        removed_since_kept = false;
        kept.push(line);
    }
    if !removed_any {
        return (reply.to_owned(), paths);
    }
    let start = kept
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(kept.len());
    let end = kept
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |i| i + 1);
    (kept[start..end].join("\n"), paths)
}

/// How far a file system timestamp may lag the clock read when the turn began: file times
/// come from the kernel's coarse clock, at most one tick behind (10 ms at HZ=100, the
/// coarsest common setting). A file made earlier than that is not this turn's.
pub const FS_CLOCK_SLACK: Duration = Duration::from_millis(10);

/// Which of `paths` (from [`parse_media_lines`]) may be sent: their resolved paths, and a
/// note for each one refused, e.g. `(not sent: /etc/passwd is outside the agent's
/// workspace)`. Relative paths are in `workspace`; without one only temp files qualify.
/// Temp files qualify only with `turn_started` (see the module doc). Blocking file system
/// calls: run it on the blocking pool.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: ChannelIngress::media_paths (spawn_blocking)"
)]
pub fn check_media_paths(
    paths: &[String],
    workspace: Option<&Path>,
    turn_started: Option<SystemTime>,
) -> (Vec<PathBuf>, Vec<String>) {
    let real_workspace = workspace.and_then(|w| w.canonicalize().ok());
    let real_temp = std::env::temp_dir().canonicalize().ok();
    let mut allowed = Vec::new();
    let mut notes = Vec::new();
    for written in paths {
        let path = Path::new(written);
        let path = match workspace {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path.to_path_buf(),
        };
        let shown = path.display();
        let real = match path.canonicalize() {
            Ok(real) => real,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                notes.push(format!("(not sent: {shown}: no such file)"));
                continue;
            }
            Err(_) => {
                notes.push(format!("(not sent: {shown} cannot be opened)"));
                continue;
            }
        };
        let in_workspace = real_workspace
            .as_ref()
            .is_some_and(|root| real.starts_with(root));
        let in_temp = real_temp
            .as_ref()
            .is_some_and(|root| real.starts_with(root));
        if !in_workspace && !in_temp {
            tracing::warn!(path = %shown, "MEDIA path outside the workspace not sent");
            notes.push(format!(
                "(not sent: {shown} is outside the agent's workspace)"
            ));
            continue;
        }
        let Ok(meta) = std::fs::metadata(&real) else {
            notes.push(format!("(not sent: {shown} cannot be opened)"));
            continue;
        };
        if !meta.is_file() {
            notes.push(format!("(not sent: {shown} is not a regular file)"));
            continue;
        }
        if !in_workspace && !made_during_turn(&meta, turn_started) {
            tracing::warn!(path = %shown, "MEDIA temp file not made by this turn not sent");
            notes.push(format!(
                "(not sent: {shown} is outside the agent's workspace and was not made by \
                 this reply)"
            ));
            continue;
        }
        allowed.push(real);
    }
    (allowed, notes)
}

/// Whether a temp file is this turn's: ours, not a second name of another file, and its
/// inode changed since the turn began.
fn made_during_turn(meta: &std::fs::Metadata, turn_started: Option<SystemTime>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(started) = turn_started else {
        return false;
    };
    let since = started.checked_sub(FS_CLOCK_SLACK).unwrap_or(started);
    let changed = u64::try_from(meta.ctime()).ok().and_then(|secs| {
        let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
        UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
    });
    meta.uid() == nix::unistd::getuid().as_raw()
        && meta.nlink() == 1
        && changed.is_some_and(|changed| changed >= since)
}

/// The path of a directive: whitespace, backticks and quotes around it removed (models
/// write `` MEDIA: `out.png` `` despite being told not to).
fn clean_path(rest: &str) -> &str {
    rest.trim()
        .trim_matches(|c: char| matches!(c, '`' | '"' | '\''))
        .trim()
}

/// An open fenced code block (CommonMark: three or more backticks or tildes; it ends at a
/// line of at least as many of the same character and nothing else).
struct Fence {
    marker: char,
    len: usize,
}

impl Fence {
    fn opened_by(line: &str) -> Option<Self> {
        let text = line.trim_start();
        let marker = text.chars().next().filter(|c| matches!(c, '`' | '~'))?;
        let len = text.chars().take_while(|&c| c == marker).count();
        // A backtick fence's info string cannot contain a backtick (that is inline code).
        let info_ok = marker != '`' || !text[len..].contains('`');
        (len >= 3 && info_ok).then_some(Self { marker, len })
    }

    fn is_closed_by(&self, line: &str) -> bool {
        let text = line.trim();
        let len = text.chars().take_while(|&c| c == self.marker).count();
        len >= self.len && len * self.marker.len_utf8() == text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(reply: &str) -> (String, Vec<String>) {
        parse_media_lines(reply)
    }

    fn owned(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| (*p).to_owned()).collect()
    }

    #[test]
    fn directives_become_paths_and_leave_the_text() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("no media here", "no media here", &[]),
            ("MEDIA:a.png", "", &["a.png"]),
            (
                "Here it is:\nMEDIA:out/chart.png",
                "Here it is:",
                &["out/chart.png"],
            ),
            (
                "Two files:\nMEDIA: a.pdf \n  MEDIA:b.mp3\nEnjoy.",
                "Two files:\nEnjoy.",
                &["a.pdf", "b.mp3"],
            ),
            ("MEDIA: `c.png`", "", &["c.png"]),
            ("MEDIA:\"d e.jpg\"", "", &["d e.jpg"]),
            ("MEDIA: 'f.wav'", "", &["f.wav"]),
            ("MEDIA:https://x.test/a.mp4", "", &["https://x.test/a.mp4"]),
            ("Hi\r\nMEDIA:a.png\r\nBye", "Hi\nBye", &["a.png"]),
            // Blank lines around a removed directive collapse to one.
            (
                "Intro\n\nMEDIA:a.png\n\nOutro",
                "Intro\n\nOutro",
                &["a.png"],
            ),
            ("\n\nMEDIA:a.png\n\n", "", &["a.png"]),
            // Empty directives are dropped with their line.
            ("Text\nMEDIA:\nMEDIA:  ``  \nMEDIA:\"\"", "Text", &[]),
            // Not at the start of a line: prose.
            ("Use MEDIA:path to send", "Use MEDIA:path to send", &[]),
            ("`MEDIA:a.png`", "`MEDIA:a.png`", &[]),
            // Case matters, as in OpenClaw.
            ("media:a.png", "media:a.png", &[]),
        ];
        for (reply, text, paths) in cases {
            assert_eq!(
                parse(reply),
                ((*text).to_owned(), owned(paths)),
                "{reply:?}"
            );
        }
    }

    #[test]
    fn a_directive_in_a_fenced_code_block_is_text() {
        let reply = "Syntax:\n```\nMEDIA:example.png\n```\nMEDIA:real.png";
        assert_eq!(
            parse(reply),
            (
                "Syntax:\n```\nMEDIA:example.png\n```".to_owned(),
                owned(&["real.png"])
            )
        );
        let tilde = "~~~md\nMEDIA:x.png\n~~~\nMEDIA:y.png";
        assert_eq!(
            parse(tilde),
            ("~~~md\nMEDIA:x.png\n~~~".to_owned(), owned(&["y.png"]))
        );
        // A shorter or different fence does not close the block.
        let long = "````\n```\nMEDIA:x.png\n~~~~\n````\nMEDIA:y.png";
        assert_eq!(parse(long).1, owned(&["y.png"]));
        // An unclosed fence runs to the end.
        let open = "```\nMEDIA:x.png";
        assert_eq!(parse(open), (open.to_owned(), vec![]));
        // Inline code on one line is not a fence.
        let inline = "```a``` b\nMEDIA:z.png";
        assert_eq!(parse(inline).1, owned(&["z.png"]));
    }

    #[test]
    fn malformed_input_never_panics() {
        for reply in [
            "",
            "MEDIA:",
            "MEDIA:`",
            "MEDIA:'\"`",
            "```",
            "``",
            "~~~\n~~",
            "\u{feff}MEDIA:a",
            "MEDIA:é\u{0}",
            "\n\n\n",
            "``é`\nMEDIA:ü.png",
            "   ",
        ] {
            let (text, paths) = parse(reply);
            assert!(paths.iter().all(|p| !p.is_empty()), "{reply:?}");
            assert!(text.len() <= reply.len(), "{reply:?}");
        }
    }

    mod checks {
        #![allow(
            clippy::disallowed_methods,
            reason = "tests set up and inspect files directly"
        )]
        use super::*;
        use std::os::unix::fs::symlink;

        fn check(paths: &[&str], ws: &Path, started: SystemTime) -> (Vec<PathBuf>, Vec<String>) {
            let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
            check_media_paths(&paths, Some(ws), Some(started))
        }

        #[test]
        fn workspace_files_go_and_everything_else_is_named() {
            let tmp = tempfile::tempdir().unwrap();
            let ws = tmp.path().join("ws");
            std::fs::create_dir_all(ws.join("out")).unwrap();
            std::fs::write(ws.join("out/a.png"), "png").unwrap();
            std::fs::write(tmp.path().join("outside.txt"), "secret").unwrap();
            symlink("/etc/passwd", ws.join("passwd")).unwrap();
            std::fs::create_dir(ws.join("dir")).unwrap();
            // The tempdir is in the temp directory: a turn that began later made none of it.
            let now = SystemTime::now() + Duration::from_secs(5);
            let (allowed, notes) = check(
                &[
                    "out/a.png",
                    "/etc/passwd",
                    "passwd",
                    "../outside.txt",
                    "missing.png",
                    "dir",
                ],
                &ws,
                now,
            );
            let real_ws = ws.canonicalize().unwrap();
            assert_eq!(allowed, vec![real_ws.join("out/a.png")]);
            let w = ws.display();
            assert_eq!(
                notes,
                vec![
                    "(not sent: /etc/passwd is outside the agent's workspace)".to_owned(),
                    format!("(not sent: {w}/passwd is outside the agent's workspace)"),
                    format!(
                        "(not sent: {w}/../outside.txt is outside the agent's workspace and \
                         was not made by this reply)"
                    ),
                    format!("(not sent: {w}/missing.png: no such file)"),
                    format!("(not sent: {w}/dir is not a regular file)"),
                ]
            );
        }

        #[test]
        fn a_temp_file_goes_only_when_this_turn_made_it() {
            let tmp = tempfile::tempdir().unwrap();
            let file = tempfile::NamedTempFile::new().unwrap();
            let path = file.path().to_str().unwrap().to_owned();
            let real = file.path().canonicalize().unwrap();
            // Made before the turn began: refused.
            let later = SystemTime::now() + Duration::from_secs(5);
            let (allowed, notes) = check(&[&path], tmp.path(), later);
            assert!(allowed.is_empty());
            assert_eq!(
                notes,
                vec![format!(
                    "(not sent: {path} is outside the agent's workspace and was not made by \
                     this reply)"
                )]
            );
            // Made after: sent.
            let earlier = SystemTime::now() - Duration::from_secs(5);
            assert_eq!(
                check(&[&path], tmp.path(), earlier),
                (vec![real.clone()], vec![])
            );
            // Without a turn (heartbeat, cron), never.
            let paths = vec![path.clone()];
            assert!(
                check_media_paths(&paths, Some(tmp.path()), None)
                    .0
                    .is_empty()
            );
            // A second name for a file is not this turn's file.
            let link = real.with_extension("link");
            std::fs::hard_link(&real, &link).unwrap();
            let (allowed, _) = check(&[&path], tmp.path(), earlier);
            std::fs::remove_file(&link).unwrap();
            assert!(allowed.is_empty());
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// Any text, including lone fence markers, quotes and multi-byte characters:
            /// no panic, no empty path, every path a part of its line, and a reply
            /// without the prefix unchanged.
            #[test]
            fn any_reply_parses(reply in "\\PC{0,300}") {
                check(&reply);
            }

            /// Replies assembled from the pieces the parser looks at, so directives,
            /// fences and blank lines meet in every order.
            #[test]
            fn directive_shaped_replies_parse(
                lines in proptest::collection::vec(
                    "( |\t)?(MEDIA:|```|~~~|````|`|\"|'|é|\r|[a-z./ ]{0,8}){0,4}",
                    0..12,
                )
            ) {
                check(&lines.join("\n"));
            }
        }

        fn check(reply: &str) {
            let (text, paths) = parse_media_lines(reply);
            for path in &paths {
                assert!(!path.is_empty());
                assert!(!path.contains('\n'));
                assert!(reply.contains(path.as_str()), "{path:?} not in {reply:?}");
            }
            if !reply.contains(MEDIA_PREFIX) {
                assert_eq!((text.as_str(), paths.len()), (reply, 0));
            }
        }
    }
}
