//! pi's forking of a session (`fork`, `get_fork_messages`): the user messages one can
//! fork from, and the new session a fork starts — pi's `createBranchedSession`: a new file
//! (its header's `parentSession` naming the old one) holding the path from the root to the
//! entry before the chosen user message, ids and parents kept, so the tree stays pi's and
//! the next prompt continues from there. The chosen message's text goes back to the client
//! (pi pre-fills its editor with it); the old file is left as it was.

use std::collections::HashMap;
use std::path::Path;

use pincer_ai::Message;
use pincer_store::{Entry, EntryBody, LabelEntry, Transcript};
use serde::Serialize;

use crate::worker::session_file::SessionFile;

/// One user message of `get_fork_messages`: `{entryId, text}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkMessage {
    pub entry_id: String,
    pub text: String,
}

/// The user messages of the session, in file order (every branch of the file, as pi lists
/// them), those without text left out.
pub fn fork_messages(transcript: Option<&Transcript>) -> Vec<ForkMessage> {
    let Some(transcript) = transcript else {
        return Vec::new();
    };
    transcript
        .entries()
        .iter()
        .filter_map(|entry| {
            let text = user_text(entry)?;
            (!text.is_empty()).then(|| ForkMessage {
                entry_id: entry.id.clone(),
                text,
            })
        })
        .collect()
}

/// The text of a user message entry (its text blocks joined, images left out).
fn user_text(entry: &Entry) -> Option<String> {
    match &entry.body {
        EntryBody::Message(m) => match &m.message {
            Message::User(user) => Some(user.text()),
            _ => None,
        },
        _ => None,
    }
}

/// A fork: the new session and the text of the message forked from.
pub struct Forked {
    pub session: SessionFile,
    pub text: String,
}

/// Forks `transcript` before the user message `entry_id`: `None` when that is not a user
/// message of the session (pi's "Invalid entry ID for forking"). The new session is in
/// `dir`, not written yet (the caller writes it off the runtime's threads).
pub fn fork(transcript: &Transcript, entry_id: &str, dir: &Path, cwd: &Path) -> Option<Forked> {
    let selected = transcript.get(entry_id)?;
    let text = user_text(selected)?;
    let parent_session = Some(transcript.path().display().to_string());
    let entries = match &selected.parent_id {
        // The first entry of its file: the fork is an empty session.
        None => Vec::new(),
        Some(parent) => branch_with_labels(transcript, parent),
    };
    Some(Forked {
        session: SessionFile::pending(dir, cwd, parent_session, entries),
        text,
    })
}

/// A copy of the session's current branch whole (pi's `clone`: a fork at the leaf), not
/// written yet; `None` for a session without entries.
pub fn clone_branch(session: &SessionFile, dir: &Path, cwd: &Path) -> Option<SessionFile> {
    let parent_session = Some(session.path().display().to_string());
    let entries = match session.written() {
        Some(transcript) => branch_with_labels(transcript, transcript.leaf_id()?),
        None => session.pending_entries().to_vec(),
    };
    if entries.is_empty() {
        return None;
    }
    Some(SessionFile::pending(dir, cwd, parent_session, entries))
}

/// The path root → `leaf` without its `label` entries (re-parented over them), then one `label` entry per labelled
/// entry of the path with its label as it stands now (pi's way: labels elsewhere in the
/// tree, and cleared ones, stay behind).
fn branch_with_labels(transcript: &Transcript, leaf: &str) -> Vec<Entry> {
    // An entry after a dropped label hangs on the label's parent instead (pi leaves that
    // parent dangling, which cuts the path short when the file is read back).
    let mut path: Vec<Entry> = Vec::new();
    let mut parent_of_dropped: HashMap<&str, Option<String>> = HashMap::new();
    for entry in transcript.branch(leaf) {
        let parent = match entry.parent_id.as_deref() {
            Some(p) => match parent_of_dropped.get(p) {
                Some(replacement) => replacement.clone(),
                None => Some(p.to_owned()),
            },
            None => None,
        };
        if matches!(entry.body, EntryBody::Label(_)) {
            parent_of_dropped.insert(&entry.id, parent);
            continue;
        }
        path.push(Entry {
            parent_id: parent,
            ..entry.clone()
        });
    }
    let on_path: std::collections::HashSet<String> = path.iter().map(|e| e.id.clone()).collect();
    // The last label entry of a target wins; an empty one clears it.
    let mut labels: HashMap<&str, Option<&str>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for entry in transcript.entries() {
        if let EntryBody::Label(label) = &entry.body
            && on_path.contains(&label.target_id)
        {
            if !labels.contains_key(label.target_id.as_str()) {
                order.push(&label.target_id);
            }
            labels.insert(&label.target_id, label.label.as_deref());
        }
    }
    for target in order {
        if let Some(Some(label)) = labels
            .get(target)
            .filter(|l| l.is_some_and(|l| !l.is_empty()))
        {
            let parent = path.last().map(|e| e.id.clone());
            path.push(Entry::new(
                parent,
                EntryBody::Label(LabelEntry {
                    target_id: target.to_owned(),
                    label: Some((*label).to_owned()),
                }),
            ));
        }
    }
    path
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use pincer_ai::{ContentBlock, ImageContent, UserContent, UserMessage};
    use pincer_store::{MessageEntry, SessionHeader};

    use super::*;

    fn user(content: UserContent) -> EntryBody {
        EntryBody::Message(MessageEntry {
            message: Message::User(UserMessage {
                content,
                timestamp: 1,
            }),
        })
    }

    fn entry(id: &str, parent: Option<&str>, body: EntryBody) -> Entry {
        Entry {
            id: id.into(),
            parent_id: parent.map(str::to_owned),
            timestamp: "2026-11-28T06:00:00.000Z".into(),
            body,
        }
    }

    fn label(target: &str, text: Option<&str>) -> EntryBody {
        EntryBody::Label(LabelEntry {
            target_id: target.into(),
            label: text.map(str::to_owned),
        })
    }

    /// a (user "one") ← b (label a) ← c (user, image only) ← d (user "two"), and a branch
    /// e (user "other") off a.
    fn transcript(dir: &Path) -> Transcript {
        let path = dir.join("s.jsonl");
        let mut t = Transcript::create(&path, SessionHeader::new("sid", "/w")).unwrap();
        let image = ContentBlock::Image(ImageContent {
            data: "AA==".into(),
            mime_type: "image/png".into(),
        });
        for e in [
            entry("a", None, user(UserContent::Text("one".into()))),
            entry("b", Some("a"), label("a", Some("start"))),
            entry("c", Some("b"), user(UserContent::Blocks(vec![image]))),
            entry(
                "d",
                Some("c"),
                user(UserContent::Blocks(vec![
                    ContentBlock::text("tw"),
                    ContentBlock::text("o"),
                ])),
            ),
            entry("e", Some("a"), user(UserContent::Text("other".into()))),
            entry("f", Some("e"), label("e", Some("x"))),
        ] {
            t.append(e).unwrap();
        }
        t
    }

    #[test]
    fn every_user_message_with_text_can_be_forked_from() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path());
        let listed: Vec<(String, String)> = fork_messages(Some(&t))
            .into_iter()
            .map(|m| (m.entry_id, m.text))
            .collect();
        assert_eq!(
            listed,
            [
                ("a".into(), "one".into()),
                ("d".into(), "two".into()),
                ("e".into(), "other".into())
            ]
        );
        assert!(fork_messages(None).is_empty());
    }

    #[test]
    fn a_fork_holds_the_path_before_the_message_and_its_labels() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path());
        let mut forked = fork(&t, "d", &dir.path().join("out"), Path::new("/w")).unwrap();
        assert_eq!(forked.text, "two");
        let written = forked.session.transcript().unwrap();
        assert_eq!(
            written.header().parent_session.as_deref(),
            Some(t.path().to_str().unwrap())
        );
        let ids: Vec<(&str, Option<&str>)> = written
            .entries()
            .iter()
            .map(|e| (e.id.as_str(), e.parent_id.as_deref()))
            .collect();
        // a and c kept, c on a now: the label b is re-made after them.
        assert_eq!(&ids[..2], &[("a", None), ("c", Some("a"))]);
        assert_eq!(ids.len(), 3);
        assert_eq!(ids[2].1, Some("c"));
        assert_eq!(written.entries()[2].body, label("a", Some("start")));
        // The branch off `a` and its label stay behind.
        assert!(written.get("e").is_none());
    }

    #[test]
    fn a_fork_from_the_first_entry_is_an_empty_session() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path());
        let forked = fork(&t, "a", dir.path(), Path::new("/w")).unwrap();
        assert_eq!(forked.text, "one");
        assert!(forked.session.written().is_none());
        assert!(forked.session.messages().is_empty());
    }

    #[test]
    fn a_clone_holds_the_current_branch_whole() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path());
        let path = t.path().to_owned();
        let source = SessionFile::open(&path).unwrap();
        let mut cloned = clone_branch(&source, &dir.path().join("c"), Path::new("/w")).unwrap();
        let written = cloned.transcript().unwrap();
        // The leaf is the label f on e: a and e, then the labels of both re-made.
        let ids: Vec<&str> = written
            .entries()
            .iter()
            .map(|e| e.id.as_str())
            .take(2)
            .collect();
        assert_eq!(ids, ["a", "e"]);
        assert_eq!(written.entries().len(), 4);
        assert_eq!(written.entries()[2].body, label("a", Some("start")));
        assert_eq!(written.entries()[3].body, label("e", Some("x")));
        assert_eq!(
            written.entries()[3].parent_id,
            Some(written.entries()[2].id.clone())
        );
        assert_eq!(
            written.header().parent_session.as_deref(),
            Some(path.to_str().unwrap())
        );
        let empty = SessionFile::pending(dir.path(), Path::new("/w"), None, Vec::new());
        assert!(clone_branch(&empty, dir.path(), Path::new("/w")).is_none());
    }

    #[test]
    fn only_user_messages_of_the_session_can_be_forked_from() {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(dir.path());
        for id in ["b", "nope", ""] {
            assert!(fork(&t, id, dir.path(), Path::new("/w")).is_none(), "{id}");
        }
    }
}
