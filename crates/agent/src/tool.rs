//! The tool contract: what an agent can call. A tool has a name, a description, a JSON
//! schema of its parameters and an `execute` that may stream partial results. Typed tools
//! declare their arguments as a Rust struct; the schema is derived from it and arguments
//! are validated by deserialising into it before `run` is called.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pincer_ai::{ContentBlock, ImageContent};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What a tool returns (pi's `AgentToolResult`): content the model reads, details it does not.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolOutput {
    pub content: Vec<ContentBlock>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl ToolOutput {
    /// One text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::text(text)],
            details: None,
        }
    }

    /// An image block.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Self {
            content: vec![ContentBlock::Image(ImageContent {
                data: data.into(),
                mime_type: mime_type.into(),
            })],
            details: None,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The text blocks joined (for logs and tests).
    pub fn text_content(&self) -> String {
        pincer_ai::texts(&self.content)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Why a tool call failed. Every failure becomes an `isError` tool result the model can
/// read; none ends the run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not match the tool's parameters.
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments { tool: String, message: String },
    /// The tool ran and failed; the message says why and what to try instead.
    #[error("{0}")]
    Failed(String),
    /// The call was cancelled (abort).
    #[error("the tool call was aborted")]
    Aborted,
}

impl ToolError {
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Failed(message.into())
    }
}

/// Receives partial results while a tool runs (pi's `onUpdate`).
pub type UpdateSink = Arc<dyn Fn(ToolOutput) + Send + Sync>;

/// Per-call context handed to `execute`.
#[derive(Clone)]
pub struct ToolContext {
    pub call_id: String,
    /// Cancelled when the run is aborted; long-running tools must stop promptly.
    pub cancel: CancellationToken,
    updates: Option<UpdateSink>,
    session_key: Option<Arc<str>>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .finish_non_exhaustive()
    }
}

impl ToolContext {
    pub fn new(call_id: impl Into<String>, cancel: CancellationToken) -> Self {
        Self {
            call_id: call_id.into(),
            cancel,
            updates: None,
            session_key: None,
        }
    }

    /// The call runs in the session `key` (see [`crate::AgentConfig::session_key`]).
    pub fn with_session_key(mut self, key: Option<Arc<str>>) -> Self {
        self.session_key = key;
        self
    }

    /// The session the call runs in, when the agent runs in one.
    pub fn session_key(&self) -> Option<&str> {
        self.session_key.as_deref()
    }

    pub fn with_updates(mut self, updates: UpdateSink) -> Self {
        self.updates = Some(updates);
        self
    }

    /// Push a partial result to whoever watches this call.
    pub fn update(&self, partial: ToolOutput) {
        if let Some(sink) = &self.updates {
            sink(partial);
        }
    }
}

/// Whether a tool may run alongside the other calls of the same assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExecutionMode {
    #[default]
    Parallel,
    /// Forces the whole batch to run one call at a time (pi 0.73).
    Sequential,
}

/// A tool an agent can call.
pub trait AgentTool: Send + Sync + 'static {
    fn name(&self) -> &str;
    /// Name shown to people.
    fn label(&self) -> &str {
        self.name()
    }
    fn description(&self) -> &str;
    /// JSON schema of the arguments object.
    fn parameters(&self) -> &Value;
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    /// Run the tool. Arguments are the model's JSON, not yet validated.
    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>>;
}

/// A tool whose arguments are a Rust type. Wrap it with [`typed`] to get an [`AgentTool`].
pub trait TypedTool: Send + Sync + 'static {
    type Args: DeserializeOwned + schemars::JsonSchema + Send;
    /// The name the model calls it by.
    const NAME: &'static str;
    /// The name shown to people (default: [`Self::NAME`]).
    const LABEL: &'static str = Self::NAME;
    /// What the model reads about it.
    const DESCRIPTION: &'static str;
    fn execution_mode(&self) -> ExecutionMode {
        ExecutionMode::Parallel
    }
    fn run(
        &self,
        args: Self::Args,
        ctx: ToolContext,
    ) -> impl std::future::Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// Adapts a [`TypedTool`]: derives the schema once, validates by deserialising.
pub struct Typed<T> {
    tool: T,
    schema: Value,
}

/// Wrap a typed tool as a shareable [`AgentTool`].
pub fn typed<T: TypedTool>(tool: T) -> Arc<dyn AgentTool> {
    let schema = serde_json::to_value(schemars::schema_for!(T::Args)).unwrap_or(Value::Null);
    Arc::new(Typed { tool, schema })
}

impl<T: TypedTool> AgentTool for Typed<T> {
    fn name(&self) -> &str {
        T::NAME
    }
    fn label(&self) -> &str {
        T::LABEL
    }
    fn description(&self) -> &str {
        T::DESCRIPTION
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execution_mode(&self) -> ExecutionMode {
        self.tool.execution_mode()
    }
    fn execute(
        &self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args = parse_args::<T::Args>(T::NAME, args)?;
            self.tool.run(args, ctx).await
        })
    }
}

/// Deserialise arguments, naming the offending field in the error (the model reads it).
pub fn parse_args<A: DeserializeOwned>(tool: &str, args: Value) -> Result<A, ToolError> {
    serde_path_to_error::deserialize(args).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = if path == "." {
            inner.to_string()
        } else {
            format!("{path}: {inner}")
        };
        ToolError::InvalidArguments {
            tool: tool.to_owned(),
            message,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, schemars::JsonSchema)]
    struct ReadArgs {
        /// File to read.
        path: String,
        offset: Option<u64>,
    }

    struct Read;

    impl TypedTool for Read {
        type Args = ReadArgs;
        const NAME: &'static str = "read";
        const DESCRIPTION: &'static str = "Read a file";
        async fn run(&self, args: ReadArgs, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text(format!(
                "{}@{}",
                args.path,
                args.offset.unwrap_or(0)
            )))
        }
    }

    #[tokio::test]
    async fn typed_tools_derive_schema_and_validate() {
        let tool = typed(Read);
        let schema = tool.parameters();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], serde_json::json!(["path"]));
        assert_eq!(schema["properties"]["path"]["description"], "File to read.");
        let ctx = || ToolContext::new("c1", CancellationToken::new());
        let ok = tool
            .execute(serde_json::json!({"path": "a", "offset": 3}), ctx())
            .await
            .unwrap();
        assert_eq!(ok.text_content(), "a@3");
        let err = tool
            .execute(serde_json::json!({"path": 5}), ctx())
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments for read: path: invalid type: integer `5`, expected a string"
        );
        let err = tool
            .execute(serde_json::json!({}), ctx())
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid arguments for read: missing field `path`"
        );
    }
}
