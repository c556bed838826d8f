//! The lainclaw basic tool set: `time.now`, `tools.echo`, `shell.pwd`, `fs.list_dir` and
//! `fs.read_file` (lainclaw's `src/tools/builtin/*.ts`). The file tools go through the same
//! [`PathPolicy`] as the pi-style file tools. Providers that only accept
//! `[A-Za-z0-9_-]` tool names need the names sanitised on the way out, as lainclaw does.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use pincer_agent::{AgentTool, ToolContext, ToolError, ToolOutput, TypedTool, typed};
use serde::Deserialize;
use serde_json::json;

use crate::files::ls::{DEFAULT_LS_LIMIT, list_dir};
use crate::files::open::{open_regular, read_prefix};
use crate::files::{looks_binary, path_tool, resolve_shown, utf8_prefix};
use crate::paths::PathPolicy;

/// `fs.read_file`'s default byte limit (lainclaw's).
pub const DEFAULT_READ_FILE_MAX_BYTES: usize = 204_800;
/// The most `maxBytes` may ask for: a model's number never sizes a buffer past this.
pub const MAX_READ_FILE_BYTES: usize = 4 * 1024 * 1024;

/// The five basic tools; the file ones confined by `policy`.
pub fn basic_tools(policy: PathPolicy) -> Vec<Arc<dyn AgentTool>> {
    vec![
        typed(TimeNow),
        typed(Echo),
        typed(Pwd::new(policy.clone())),
        typed(ListDir::new(policy.clone())),
        typed(ReadFile::new(policy)),
    ]
}

/// No arguments.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}

/// `time.now`: the current time as RFC 3339 UTC (milliseconds) and Unix milliseconds.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeNow;

impl TypedTool for TimeNow {
    type Args = NoArgs;

    const NAME: &'static str = "time.now";
    const DESCRIPTION: &'static str =
        "Get the current date and time (UTC, RFC 3339) and the Unix time in milliseconds.";

    async fn run(&self, _args: NoArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_err(|_| ToolError::failed("the system clock is before 1970"))?
            .as_millis();
        let unix_ms = i64::try_from(unix_ms)
            .map_err(|_| ToolError::failed("the system clock is out of range"))?;
        let iso = rfc3339_utc(unix_ms);
        Ok(ToolOutput::text(format!("{iso} (unix ms {unix_ms})"))
            .with_details(json!({"iso": iso, "unixMs": unix_ms})))
    }
}

/// RFC 3339 UTC with milliseconds for Unix milliseconds (`toISOString()`'s form).
pub use pincer_base::time::iso_from_ms as rfc3339_utc;

/// Arguments of `tools.echo`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
pub struct EchoArgs {
    /// Text to echo back.
    pub text: String,
}

/// `tools.echo`: returns its text (for testing tool calling).
#[derive(Debug, Clone, Copy, Default)]
pub struct Echo;

impl TypedTool for Echo {
    type Args = EchoArgs;

    const NAME: &'static str = "tools.echo";
    const DESCRIPTION: &'static str = "Echo the given text back unchanged.";

    async fn run(&self, args: EchoArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(args.text))
    }
}

path_tool! {
    /// `shell.pwd`: the workspace directory.
    Pwd {
        args: NoArgs,
        name: "shell.pwd",
        description: "Get the current working directory (the workspace).",
        inline: pwd,
    }
}

fn pwd(policy: &PathPolicy, _args: NoArgs) -> Result<ToolOutput, ToolError> {
    let dir = policy.workspace_dir().display().to_string();
    Ok(ToolOutput::text(dir.clone()).with_details(json!({"cwd": dir})))
}

/// Arguments of `fs.list_dir`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
pub struct ListDirArgs {
    /// Directory to list, relative to the workspace (default: the workspace).
    #[serde(default)]
    pub path: Option<String>,
}

path_tool! {
    /// `fs.list_dir`: like `ls` with its default limit.
    ListDir {
        args: ListDirArgs,
        name: "fs.list_dir",
        description: "List the entries of a directory in the workspace (directories end with '/').",
        blocking: list_default,
    }
}

fn list_default(policy: &PathPolicy, args: ListDirArgs) -> Result<ToolOutput, ToolError> {
    list_dir(
        policy,
        args.path.as_deref().unwrap_or("."),
        DEFAULT_LS_LIMIT,
    )
}

/// Arguments of `fs.read_file`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadFileArgs {
    /// File to read, relative to the workspace.
    pub path: String,
    /// Most bytes to return (default 204800, at most 4194304).
    #[serde(default)]
    pub max_bytes: Option<usize>,
}

path_tool! {
    /// `fs.read_file`: a text file's raw content, up to `maxBytes`.
    ReadFile {
        args: ReadFileArgs,
        name: "fs.read_file",
        description: "Read a text file in the workspace, up to maxBytes bytes (default 204800).",
        blocking: read_text_file,
    }
}

/// `fs.read_file`'s work: only the first `maxBytes` (+1 to know there is more) are read.
fn read_text_file(policy: &PathPolicy, args: ReadFileArgs) -> Result<ToolOutput, ToolError> {
    let (path, shown) = resolve_shown(policy, &args.path)?;
    let (mut file, meta) = open_regular(&path, &shown, &args.path, "use fs.list_dir")?;
    let max = args
        .max_bytes
        .unwrap_or(DEFAULT_READ_FILE_MAX_BYTES)
        .min(MAX_READ_FILE_BYTES);
    let (bytes, more) = read_prefix(&mut file, max, &args.path)?;
    if looks_binary(&bytes) {
        return Err(ToolError::failed(format!(
            "{shown} is a binary file; fs.read_file reads text files"
        )));
    }
    let text = utf8_prefix(&bytes, more);
    let mut out = text.to_string();
    if more {
        out.push_str(&format!(
            "\n\n[truncated: showing the first {} of {} bytes]",
            text.len(),
            meta.len()
        ));
    }
    Ok(ToolOutput::text(out).with_details(json!({
        "path": shown,
        "bytes": meta.len(),
        "truncated": more,
    })))
}
