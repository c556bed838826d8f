//! File tools: `read`, `write`, `edit`, `ls`, `grep` and `find`, after pi's built-in tools.
//! Every path the model gives goes through the [`PathPolicy`] the tool holds, so nothing
//! outside the workspace (and any extra roots) is touched. File system and search work runs
//! on the blocking thread pool. Output limits (2000 lines / 50 KB) live in [`truncate`].

use std::path::PathBuf;
use std::sync::Arc;

use pincer_agent::{AgentTool, ToolError, typed};
use tokio_util::sync::CancellationToken;

use crate::paths::PathPolicy;

/// Declares a tool confined by a [`PathPolicy`]: the struct holding the policy, its
/// `new(policy)`, and its [`TypedTool`](pincer_agent::TypedTool) impl. `run` hands the
/// tool's work, `work(&policy, args)`, to the blocking pool (`blocking`), or, for the
/// tree walks, to [`cancellable`] with the call's token as a third argument
/// (`cancellable`); `inline` runs it on the caller's task (for work that touches no disk).
/// `label` is left out where the tool shows its name.
macro_rules! path_tool {
    (
        $(#[$doc:meta])*
        $tool:ident {
            args: $args:ty,
            name: $name:literal,
            $(label: $label:literal,)?
            description: $description:expr,
            $mode:ident: $work:path $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $tool {
            policy: $crate::paths::PathPolicy,
        }

        impl $tool {
            pub fn new(policy: $crate::paths::PathPolicy) -> Self {
                Self { policy }
            }
        }

        impl pincer_agent::TypedTool for $tool {
            type Args = $args;

            const NAME: &'static str = $name;
            $(const LABEL: &'static str = $label;)?
            const DESCRIPTION: &'static str = $description;

            async fn run(
                &self,
                args: $args,
                ctx: pincer_agent::ToolContext,
            ) -> Result<pincer_agent::ToolOutput, pincer_agent::ToolError> {
                $crate::files::path_tool!(@run $mode, self, args, ctx, $work)
            }
        }
    };
    (@run blocking, $tool:ident, $args:ident, $ctx:ident, $work:path) => {{
        let _ = $ctx;
        let policy = $tool.policy.clone();
        $crate::files::blocking(move || $work(&policy, $args)).await
    }};
    (@run cancellable, $tool:ident, $args:ident, $ctx:ident, $work:path) => {{
        let policy = $tool.policy.clone();
        let cancel = $ctx.cancel.clone();
        $crate::files::cancellable(&$ctx.cancel, move || $work(&policy, $args, &cancel)).await
    }};
    (@run inline, $tool:ident, $args:ident, $ctx:ident, $work:path) => {{
        let _ = $ctx;
        $work(&$tool.policy, $args)
    }};
}
pub(crate) use path_tool;

pub mod edit;
pub mod find;
mod fuzzy;
pub mod grep;
pub mod ls;
pub(crate) mod open;
pub mod read;
pub mod truncate;
pub mod write;

pub use edit::{EditArgs, EditTool, TextEdit};
pub use find::{FindArgs, FindTool};
pub use grep::{GrepArgs, GrepTool};
pub use ls::{LsArgs, LsTool};
pub use read::{ReadArgs, ReadTool};
pub use write::{WriteArgs, WriteTool};

/// The six file tools, all confined by `policy`.
pub fn file_tools(policy: PathPolicy) -> Vec<Arc<dyn AgentTool>> {
    vec![
        typed(ReadTool::new(policy.clone())),
        typed(WriteTool::new(policy.clone())),
        typed(EditTool::new(policy.clone())),
        typed(LsTool::new(policy.clone())),
        typed(GrepTool::new(policy.clone())),
        typed(FindTool::new(policy)),
    ]
}

/// Resolve a model-given path through the policy. A leading `@` (models copy `@file`
/// mentions) is dropped, as pi does.
pub(crate) fn resolve(policy: &PathPolicy, user_path: &str) -> Result<PathBuf, ToolError> {
    let path = user_path.strip_prefix('@').unwrap_or(user_path);
    policy
        .resolve(path)
        .map_err(|e| ToolError::failed(e.to_string()))
}

/// [`resolve`], and the resolved path as the model is shown it.
pub(crate) fn resolve_shown(
    policy: &PathPolicy,
    user_path: &str,
) -> Result<(PathBuf, String), ToolError> {
    let path = resolve(policy, user_path)?;
    let shown = policy.display(&path);
    Ok((path, shown))
}

/// Run blocking file system work off the async runtime.
pub(crate) async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::failed(format!("the tool's worker task failed: {e}")))?
}

/// Like [`blocking`], but returns [`ToolError::Aborted`] as soon as `cancel` fires. The
/// work itself should watch the token too so it stops early.
pub(crate) async fn cancellable<T, F>(cancel: &CancellationToken, work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ToolError::Aborted),
        result = blocking(work) => result,
    }
}

/// An I/O error as a message that names the path the model gave.
pub(crate) fn io_error(action: &str, path: &str, err: &std::io::Error) -> ToolError {
    match err.kind() {
        std::io::ErrorKind::NotFound => {
            ToolError::failed(format!("{path}: no such file or directory"))
        }
        std::io::ErrorKind::PermissionDenied => {
            ToolError::failed(format!("cannot {action} {path}: permission denied"))
        }
        _ => ToolError::failed(format!("cannot {action} {path}: {err}")),
    }
}

/// Bytes looked at to tell binaries (and images) from text: git's and ripgrep's 8 KB.
pub(crate) const SNIFF_BYTES: usize = 8192;

/// Whether bytes look binary: a NUL in the first [`SNIFF_BYTES`] (git's and ripgrep's
/// heuristic).
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(SNIFF_BYTES).any(|&b| b == 0)
}

/// The text of `bytes`, invalid UTF-8 replaced; when the text goes on past them (`cut`), a
/// character split at the end is left out rather than shown as a replacement character.
pub(crate) fn utf8_prefix(bytes: &[u8], cut: bool) -> std::borrow::Cow<'_, str> {
    let bytes = match std::str::from_utf8(bytes) {
        Err(e) if cut && e.error_len().is_none() => &bytes[..e.valid_up_to()],
        _ => bytes,
    };
    String::from_utf8_lossy(bytes)
}
