//! Files people send, moved into the receiving agent's workspace so its tools can read them.
//!
//! The adapters download a received file before routing has decided which agent gets the
//! message, so they save it in a staging directory (`$PINCER_HOME/media/staging`). Once the
//! agent is known, [`move_to_inbox`] moves it to `<workspace>/inbox/<YYYY-MM-DD>/<name>`
//! (the date in local time) and the prompt names it by that workspace-relative path, which
//! `read` accepts. The move is a hard link and an unlink (a copy and an unlink across file
//! systems); either way the target is created exclusively, so an existing file is never
//! replaced — a second `photo.jpg` that day becomes `photo-2.jpg`. Files are 0600, created
//! directories 0700. An `inbox` that resolves outside the workspace (a symlink the agent
//! made) is refused. [`receive_into`] and [`discard_media`] do their file work on the
//! blocking pool; the other functions are blocking.

use std::fs;
use std::io::{self, ErrorKind};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use pincer_channel_port::InboundMedia;
use pincer_channel_port::file_name::{numbered, safe_name};

/// The workspace directory received files go to.
pub const INBOX_DIR: &str = "inbox";

/// Names tried (`name`, `name-2`, …) before giving up on a crowded day.
const MAX_TRIES: usize = 1000;

/// Moves the staged file `staged` into `workspace`'s inbox for `date` (`YYYY-MM-DD`) under
/// `name` (made safe by [`safe_name`]); returns its path relative to the workspace.
pub fn move_to_inbox(
    staged: &Path,
    workspace: &Path,
    date: &str,
    name: &str,
) -> io::Result<PathBuf> {
    let dir = inbox_dir(workspace, date)?;
    move_into(staged, &dir, date, name)
}

/// `workspace`'s inbox directory for `date`, created (0700) if missing and resolved: an
/// `inbox` or date directory that leads out of the workspace is refused.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: receive_into"
)]
fn inbox_dir(workspace: &Path, date: &str) -> io::Result<PathBuf> {
    let inbox = workspace.join(INBOX_DIR);
    pincer_base::create_private_dir_all(&inbox)?;
    let real_workspace = workspace.canonicalize()?;
    // Each level is checked before anything is created in it: nothing lands outside.
    let inside = |dir: &Path| -> io::Result<PathBuf> {
        let real = dir.canonicalize()?;
        if real.starts_with(&real_workspace) {
            Ok(real)
        } else {
            Err(io::Error::new(
                ErrorKind::PermissionDenied,
                format!("{} leads out of the workspace", dir.display()),
            ))
        }
    };
    let dir = inside(&inbox)?.join(date);
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Err(e) if e.kind() != ErrorKind::AlreadyExists => return Err(e),
        _ => {}
    }
    inside(&dir)
}

/// Moves `staged` into `dir` (the resolved inbox of `date`, from [`inbox_dir`]) under a
/// safe, unused form of `name`; returns its path relative to the workspace.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: receive_into"
)]
fn move_into(staged: &Path, dir: &Path, date: &str, name: &str) -> io::Result<PathBuf> {
    let relative_dir = Path::new(INBOX_DIR).join(date);
    let name = safe_name(name);
    for attempt in 1..=MAX_TRIES {
        let candidate = numbered(&name, attempt);
        let target = dir.join(&candidate);
        match place(staged, &target) {
            Ok(()) => {
                fs::remove_file(staged)?;
                return Ok(relative_dir.join(candidate));
            }
            // The same file sent again that day (a resend, a redelivery) is kept once.
            Err(e) if e.kind() == ErrorKind::AlreadyExists && same_content(staged, &target) => {
                fs::remove_file(staged)?;
                return Ok(relative_dir.join(candidate));
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        ErrorKind::AlreadyExists,
        format!("{MAX_TRIES} files named {name} in {}", dir.display()),
    ))
}

/// Removes the inbox's date folders older than `keep_days` days before `today`
/// (`YYYY-MM-DD`, the local date); `keep_days` 0 keeps everything. Only folders named by a
/// date are touched, and today's (whose files the running turns read) never is. Returns the
/// folders removed, relative to the workspace. Blocking.
#[expect(
    clippy::disallowed_methods,
    reason = "blocking by contract: callers run it on the blocking pool"
)]
pub fn prune_inbox(workspace: &Path, today: &str, keep_days: u32) -> io::Result<Vec<PathBuf>> {
    if keep_days == 0 {
        return Ok(Vec::new());
    }
    let cutoff = match today.parse::<jiff::civil::Date>() {
        Ok(date) => date
            .checked_sub(jiff::Span::new().days(i64::from(keep_days)))
            .map_err(|e| io::Error::new(ErrorKind::InvalidInput, e))?,
        Err(e) => return Err(io::Error::new(ErrorKind::InvalidInput, e)),
    };
    let inbox = workspace.join(INBOX_DIR);
    let entries = match fs::read_dir(&inbox) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(date) = name.parse::<jiff::civil::Date>() else {
            continue;
        };
        // A symlink named like a date is not the inbox's own folder: left alone.
        if date < cutoff && entry.file_type()?.is_dir() {
            fs::remove_dir_all(entry.path())?;
            removed.push(Path::new(INBOX_DIR).join(&name));
        }
    }
    removed.sort();
    Ok(removed)
}

/// Writes `bytes` (a file sent inline: a `chat.send` attachment, a data URL, a file named on
/// the command line) into `workspace`'s inbox for today under a safe, unused form of
/// `name`; returns its path relative to the workspace. The bytes go to a hidden partial
/// file first, so the inbox never shows a half-written file under its name. Blocking.
#[expect(
    clippy::disallowed_methods,
    reason = "blocking by contract: callers run it on the blocking pool"
)]
pub fn save_to_inbox(workspace: &Path, name: &str, bytes: &[u8]) -> io::Result<PathBuf> {
    use std::io::Write as _;
    let date = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    let dir = inbox_dir(workspace, &date)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let partial = dir.join(format!(".partial-{}-{nanos}", std::process::id()));
    let written = pincer_base::private_open_options()
        .write(true)
        .create_new(true)
        .open(&partial)
        .and_then(|mut out| out.write_all(bytes).and_then(|()| out.sync_all()));
    let moved = written.and_then(|()| move_into(&partial, &dir, &date, name));
    if moved.is_err() {
        let _ = fs::remove_file(&partial);
    }
    moved
}

/// `media` (staged by an adapter) moved into `workspace`'s inbox for today (local date),
/// with the workspace-relative paths the agent's tools read them by. A file that cannot be
/// moved keeps its staged path (the error is logged).
pub async fn receive_into(workspace: PathBuf, media: &[InboundMedia]) -> Vec<InboundMedia> {
    let date = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
    let owned = media.to_vec();
    let moved = tokio::task::spawn_blocking(move || {
        let dir = inbox_dir(&workspace, &date);
        owned
            .into_iter()
            .map(|mut m| {
                let name = m.file_name.clone().unwrap_or_else(|| {
                    m.path
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                });
                let result = match &dir {
                    Ok(dir) => move_into(&m.path, dir, &date, &name),
                    Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
                };
                match result {
                    Ok(relative) => m.path = relative,
                    Err(e) => {
                        tracing::error!(error = %e, path = %m.path.display(), "cannot move a received file into the workspace");
                    }
                }
                m
            })
            .collect::<Vec<_>>()
    })
    .await;
    moved.unwrap_or_else(|e| {
        tracing::error!(error = %e, "moving received files failed");
        media.to_vec()
    })
}

/// Removes the staged files of a message that gets no turn (a repeat, a stranger's): they
/// would otherwise pile up in the staging directory.
pub async fn discard_media(media: &[InboundMedia]) {
    if media.is_empty() {
        return;
    }
    let paths: Vec<PathBuf> = media.iter().map(|m| m.path.clone()).collect();
    #[expect(clippy::disallowed_methods, reason = "inside spawn_blocking")]
    let _ = tokio::task::spawn_blocking(move || {
        for path in paths {
            if let Err(e) = fs::remove_file(&path) {
                tracing::debug!(error = %e, path = %path.display(), "staged file not removed");
            }
        }
    })
    .await;
}

/// Whether the files `a` and `b` hold the same bytes (sizes first, then the contents in
/// blocks); false when either cannot be read.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: receive_into, save_to_inbox"
)]
fn same_content(a: &Path, b: &Path) -> bool {
    use std::io::Read as _;
    let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) else {
        return false;
    };
    if ma.len() != mb.len() || !mb.is_file() {
        return false;
    }
    let (Ok(mut fa), Ok(mut fb)) = (fs::File::open(a), fs::File::open(b)) else {
        return false;
    };
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = match fa.read(&mut ba) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 {
            return true;
        }
        if fb.read_exact(&mut bb[..n]).is_err() || ba[..n] != bb[..n] {
            return false;
        }
    }
}

/// `staged`'s content at `target`, which must not exist: a hard link, or a copy where
/// links do not work (another file system). Mode 0600 either way.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: receive_into"
)]
fn place(staged: &Path, target: &Path) -> io::Result<()> {
    match fs::hard_link(staged, target) {
        Ok(()) => return fs::set_permissions(target, fs::Permissions::from_mode(0o600)),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {}
    }
    let mut out = pincer_base::private_open_options()
        .write(true)
        .create_new(true)
        .open(target)?;
    let copied = io::copy(&mut fs::File::open(staged)?, &mut out).and_then(|_| out.sync_all());
    if let Err(e) = copied {
        let _ = fs::remove_file(target);
        return Err(e);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::disallowed_methods,
        reason = "tests set up and inspect files directly"
    )]
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn saved_bytes_land_privately_under_their_name_and_nothing_partial_stays() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        let first = save_to_inbox(ws, "cat photo.png", b"one").unwrap();
        let second = save_to_inbox(ws, "cat photo.png", b"two").unwrap();
        // The same bytes under the same name again are the file already there.
        assert_eq!(save_to_inbox(ws, "cat photo.png", b"one").unwrap(), first);
        assert_eq!(save_to_inbox(ws, "cat photo.png", b"two").unwrap(), second);
        let date = jiff::Zoned::now().strftime("%Y-%m-%d").to_string();
        assert_eq!(first, Path::new("inbox").join(&date).join("cat_photo.png"));
        assert_eq!(
            second,
            Path::new("inbox").join(&date).join("cat_photo-2.png")
        );
        assert_eq!(fs::read(ws.join(&second)).unwrap(), b"two");
        assert_eq!(fs::metadata(ws.join(&first)).unwrap().mode() & 0o777, 0o600);
        let names: Vec<String> = fs::read_dir(ws.join("inbox").join(&date))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn old_date_folders_are_pruned_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        for dir in [
            "2026-10-27",
            "2026-10-28",
            "2026-11-27",
            "notes",
            "2025-13-40",
        ] {
            fs::create_dir_all(ws.join("inbox").join(dir)).unwrap();
            fs::write(ws.join("inbox").join(dir).join("f"), "x").unwrap();
        }
        std::os::unix::fs::symlink(ws.join("inbox/notes"), ws.join("inbox/2020-01-01")).unwrap();
        let removed = prune_inbox(ws, "2026-11-27", 30).unwrap();
        assert_eq!(removed, [Path::new("inbox/2026-10-27")]);
        let mut left = sorted(&ws.join("inbox"));
        left.sort();
        assert_eq!(
            left,
            [
                "2020-01-01",
                "2025-13-40",
                "2026-10-28",
                "2026-11-27",
                "notes"
            ]
        );
        assert!(
            prune_inbox(ws, "2026-11-27", 0).unwrap().is_empty(),
            "0 keeps all"
        );
        assert!(
            prune_inbox(&ws.join("nothing"), "2026-11-27", 1)
                .unwrap()
                .is_empty()
        );
    }

    fn sorted(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn files_move_in_privately_and_never_replace_one() {
        let tmp = tempfile::tempdir().unwrap();
        let (staging, ws) = (tmp.path().join("staging"), tmp.path().join("ws"));
        fs::create_dir_all(&staging).unwrap();
        for content in ["one", "two"] {
            let staged = staging.join("telegram-1-2-photo.jpg");
            fs::write(&staged, content).unwrap();
            fs::set_permissions(&staged, fs::Permissions::from_mode(0o644)).unwrap();
            move_to_inbox(&staged, &ws, "2026-11-27", "photo.jpg").unwrap();
            assert!(!staged.exists());
        }
        let dir = ws.join("inbox/2026-11-27");
        assert_eq!(fs::read_to_string(dir.join("photo.jpg")).unwrap(), "one");
        assert_eq!(fs::read_to_string(dir.join("photo-2.jpg")).unwrap(), "two");
        assert_eq!(
            fs::metadata(dir.join("photo-2.jpg")).unwrap().mode() & 0o777,
            0o600
        );
        for d in [ws.join("inbox"), dir] {
            assert_eq!(fs::metadata(d).unwrap().mode() & 0o777, 0o700);
        }
    }

    #[test]
    fn an_inbox_leading_out_of_the_workspace_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, outside) = (tmp.path().join("ws"), tmp.path().join("outside"));
        fs::create_dir_all(&ws).unwrap();
        fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join(INBOX_DIR)).unwrap();
        let staged = tmp.path().join("staged");
        fs::write(&staged, "x").unwrap();
        let err = move_to_inbox(&staged, &ws, "2026-11-27", "a.txt").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::PermissionDenied);
        assert!(staged.exists());
        assert!(!outside.join("2026-11-27").exists());
    }
}
