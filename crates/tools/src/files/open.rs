//! Opening a file the model asked to read: regular files only, and never a blocking open.
//!
//! A FIFO opened for reading waits for a writer forever, and a device (`/dev/zero`) never
//! ends, so `read` and `fs.read_file` refuse anything that is not a regular file. The path
//! is checked with `metadata` first, so a device is not even opened (opening some has side
//! effects). Between that check and the open the path can be swapped (for a FIFO, say), so
//! the open uses `O_NONBLOCK` — a FIFO's open returns at once instead of waiting for a
//! writer — and the handle's own `fstat` decides: what is read is what was checked.
//! `O_NONBLOCK` changes nothing for reads of a regular file.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use pincer_agent::ToolError;

use super::io_error;

/// `path` opened for reading with its metadata from the open handle, if it is a regular
/// file. `shown` names it in errors; `dir_hint` says what to use for a directory.
pub(crate) fn open_regular(
    path: &Path,
    shown: &str,
    user_path: &str,
    dir_hint: &str,
) -> Result<(File, Metadata), ToolError> {
    let before = std::fs::metadata(path).map_err(|e| io_error("read", user_path, &e))?;
    refuse_irregular(&before, shown, dir_hint)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOCTTY)
        .open(path)
        .map_err(|e| io_error("read", user_path, &e))?;
    let meta = file
        .metadata()
        .map_err(|e| io_error("read", user_path, &e))?;
    refuse_irregular(&meta, shown, dir_hint)?;
    Ok((file, meta))
}

fn refuse_irregular(meta: &Metadata, shown: &str, dir_hint: &str) -> Result<(), ToolError> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(());
    }
    if kind.is_dir() {
        return Err(ToolError::failed(format!(
            "{shown} is a directory; {dir_hint}"
        )));
    }
    let what = if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else {
        "not a file"
    };
    Err(ToolError::failed(format!(
        "{shown} is {what}; only regular files can be read"
    )))
}

/// The next `max` bytes of `file` at most (fewer at its end), and whether there was more.
/// One byte past `max` is read to know that, and dropped: what follows is not for reading.
pub(crate) fn read_prefix(
    file: &mut File,
    max: usize,
    user_path: &str,
) -> Result<(Vec<u8>, bool), ToolError> {
    let mut bytes = read_upto(file, max.saturating_add(1), user_path)?;
    let more = bytes.len() > max;
    bytes.truncate(max);
    Ok((bytes, more))
}

/// The next `max` bytes of `file` at most (fewer at its end); nothing past them is read.
pub(crate) fn read_upto(
    file: &mut File,
    max: usize,
    user_path: &str,
) -> Result<Vec<u8>, ToolError> {
    let mut bytes = Vec::new();
    file.by_ref()
        .take(u64::try_from(max).unwrap_or(u64::MAX))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error("read", user_path, &e))?;
    Ok(bytes)
}
