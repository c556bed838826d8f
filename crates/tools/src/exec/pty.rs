//! `pty: true`: the command runs attached to a pseudo-terminal, so programs that check for
//! a TTY (colour output, interactive prompts, `tty`) behave as in a terminal. The shell
//! becomes the leader of a new session (`setsid`) with the pty's secondary side as its
//! controlling terminal and as stdin, stdout and stderr; its process group id is its pid,
//! so the supervisor kills the group exactly as for a piped command.
//!
//! The terminal merges stdout and stderr, echoes what `process write` sends and turns
//! `\n` into `\r\n` (the sanitiser drops the `\r`). Reading the primary side once no
//! process holds the secondary side open fails with `EIO` on Linux: that is the end of the
//! output, reported as EOF.
//!
//! Also here: [`Input`], where `process write` goes for either kind of session.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use nix::errno::Errno;
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use tokio::process::{Child, ChildStdin};

use super::session::SpawnSpec;

/// Window size of the terminal: rows, columns.
pub const WINDOW_SIZE: (u16, u16) = (24, 120);
/// `TERM` for a pty command when the environment has none.
pub const DEFAULT_TERM: &str = "xterm-256color";
/// Ctrl-D, the terminal's end-of-file character (`VEOF`).
const EOT: u8 = 0x04;

/// The child's merged output: a pipe or the pty's primary side.
pub(super) type OutputStream = Box<dyn AsyncRead + Send + Unpin>;

/// A started child, before its session exists.
pub(super) struct Spawned {
    pub child: Child,
    pub input: Option<Input>,
    pub output: OutputStream,
}

/// Where `process write` goes.
pub(super) enum Input {
    /// The write end of the command's stdin pipe.
    Pipe(ChildStdin),
    /// The pty's primary side.
    Pty {
        writer: pty_process::OwnedWritePty,
        /// The last byte written was not a newline.
        mid_line: bool,
    },
}

impl Input {
    /// Write `data`; with `eof`, signal end of input afterwards. A pipe is then closed by
    /// the caller dropping `self`. A terminal has no half-close: end of input is Ctrl-D on
    /// an empty line (after a partial line, the first Ctrl-D only hands that line over, so
    /// a second one is sent).
    pub(super) async fn write(&mut self, data: &[u8], eof: bool) -> io::Result<()> {
        match self {
            Self::Pipe(pipe) => {
                if !data.is_empty() {
                    pipe.write_all(data).await?;
                    pipe.flush().await?;
                }
            }
            Self::Pty { writer, mid_line } => {
                if let Some(&last) = data.last() {
                    writer.write_all(data).await?;
                    *mid_line = last != b'\n';
                }
                if eof {
                    let eot: &[u8] = if *mid_line { &[EOT, EOT] } else { &[EOT] };
                    writer.write_all(eot).await?;
                    *mid_line = false;
                }
                writer.flush().await?;
            }
        }
        Ok(())
    }
}

/// Start `sh -c <command>` on a new pty, in a new session, with `spec`'s directory and
/// environment (plus `TERM` when it has none).
pub(super) fn spawn(spec: &SpawnSpec) -> io::Result<Spawned> {
    let (pty, pts) = pty_process::open().map_err(into_io)?;
    pty.resize(pty_process::Size::new(WINDOW_SIZE.0, WINDOW_SIZE.1))
        .map_err(into_io)?;
    let mut command = spec.shell()?;
    if !spec.env.iter().any(|(k, _)| k == "TERM") {
        command.env("TERM", DEFAULT_TERM);
    }
    // Kept by `pty_process::Command::from`, which runs its own setup before it.
    super::orphans::set_up_child(&mut command);
    // No `process_group(0)`: `setsid` (done by pty-process) makes the shell a group leader,
    // and would fail if it already were one. `spawn` consumes `pts`, so once it returns
    // only the child holds the secondary side and its exit ends the output.
    let child = pty_process::Command::from(command)
        .spawn(pts)
        .map_err(into_io)?;
    let (reader, writer) = pty.into_split();
    Ok(Spawned {
        child,
        input: Some(Input::Pty {
            writer,
            mid_line: false,
        }),
        output: Box::new(PtyOutput(reader)),
    })
}

fn into_io(error: pty_process::Error) -> io::Error {
    match error {
        pty_process::Error::Io(e) => e,
        pty_process::Error::Rustix(errno) => io::Error::from(errno),
        other => io::Error::other(other.to_string()),
    }
}

/// The pty's primary side, reading `EIO` (no process holds the secondary side any more)
/// as end of output.
struct PtyOutput(pty_process::OwnedReadPty);

impl AsyncRead for PtyOutput {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.0).poll_read(cx, buf) {
            Poll::Ready(Err(e)) if e.raw_os_error() == Some(Errno::EIO as i32) => {
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}
