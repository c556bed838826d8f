//! Extension points around the loop: tool-call hooks (before: ordered by priority, run one
//! after another, may rewrite arguments or block; after: may rewrite the result), a hook on
//! tool results before they enter the transcript, `agent_end` hooks (run in parallel), and
//! the context hooks (`transform_context`, `convert_to_llm`, `get_api_key`).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pincer_ai::{AssistantMessage, Message, ToolResultMessage};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::tool::ToolOutput;

/// What a before-tool-call hook sees.
#[derive(Debug, Clone)]
pub struct ToolCallInfo {
    pub assistant: Arc<AssistantMessage>,
    pub tool_call_id: String,
    pub tool_name: String,
    pub args: Value,
}

/// A before-tool-call hook's decision.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeToolCall {
    Continue,
    /// Run the tool with these arguments instead (later hooks see them).
    Rewrite(Value),
    /// Do not run the tool; the model reads `reason` as an error result.
    Block {
        reason: String,
    },
}

/// An after-tool-call hook may replace the result and its error flag.
#[derive(Debug, Clone, PartialEq)]
pub struct AfterToolCall {
    pub result: ToolOutput,
    pub is_error: bool,
}

pub type BeforeToolCallHook =
    Arc<dyn Fn(ToolCallInfo) -> BoxFuture<'static, BeforeToolCall> + Send + Sync>;
pub type AfterToolCallHook =
    Arc<dyn Fn(ToolCallInfo, AfterToolCall) -> BoxFuture<'static, AfterToolCall> + Send + Sync>;
pub type ToolResultPersistHook = Arc<dyn Fn(&mut ToolResultMessage) + Send + Sync>;
pub type AgentEndHook = Arc<dyn Fn(Arc<Vec<Message>>) -> BoxFuture<'static, ()> + Send + Sync>;
pub type TransformContextHook =
    Arc<dyn Fn(Vec<Message>, CancellationToken) -> BoxFuture<'static, Vec<Message>> + Send + Sync>;
pub type ConvertToLlmHook = Arc<dyn Fn(&[Message]) -> Vec<Message> + Send + Sync>;
pub type GetApiKeyHook = Arc<dyn Fn(String) -> BoxFuture<'static, Option<String>> + Send + Sync>;

/// All hooks of an agent.
#[derive(Clone, Default)]
pub struct Hooks {
    before_tool_call: Vec<(i32, BeforeToolCallHook)>,
    after_tool_call: Vec<(i32, AfterToolCallHook)>,
    pub(crate) tool_result_persist: Vec<ToolResultPersistHook>,
    pub(crate) agent_end: Vec<AgentEndHook>,
    pub(crate) transform_context: Option<TransformContextHook>,
    pub(crate) convert_to_llm: Option<ConvertToLlmHook>,
    pub(crate) get_api_key: Option<GetApiKeyHook>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("before_tool_call", &self.before_tool_call.len())
            .field("after_tool_call", &self.after_tool_call.len())
            .finish_non_exhaustive()
    }
}

impl Hooks {
    /// Higher priority runs first; equal priorities keep registration order.
    pub fn before_tool_call(&mut self, priority: i32, hook: BeforeToolCallHook) -> &mut Self {
        self.before_tool_call.push((priority, hook));
        self.before_tool_call
            .sort_by_key(|(priority, _)| std::cmp::Reverse(*priority));
        self
    }

    pub fn after_tool_call(&mut self, priority: i32, hook: AfterToolCallHook) -> &mut Self {
        self.after_tool_call.push((priority, hook));
        self.after_tool_call
            .sort_by_key(|(priority, _)| std::cmp::Reverse(*priority));
        self
    }

    pub fn tool_result_persist(&mut self, hook: ToolResultPersistHook) -> &mut Self {
        self.tool_result_persist.push(hook);
        self
    }

    pub fn agent_end(&mut self, hook: AgentEndHook) -> &mut Self {
        self.agent_end.push(hook);
        self
    }

    pub fn transform_context(&mut self, hook: TransformContextHook) -> &mut Self {
        self.transform_context = Some(hook);
        self
    }

    /// Adds a context transform that runs after the one already set (if any), so a caller
    /// can add its own without knowing about, or dropping, another's.
    pub fn wrap_transform_context(&mut self, hook: TransformContextHook) -> &mut Self {
        let combined: TransformContextHook = match self.transform_context.take() {
            None => hook,
            Some(first) => Arc::new(move |messages, cancel: CancellationToken| {
                let (first, then) = (Arc::clone(&first), Arc::clone(&hook));
                Box::pin(async move {
                    let messages = first(messages, cancel.clone()).await;
                    then(messages, cancel).await
                })
            }),
        };
        self.transform_context = Some(combined);
        self
    }

    pub fn convert_to_llm(&mut self, hook: ConvertToLlmHook) -> &mut Self {
        self.convert_to_llm = Some(hook);
        self
    }

    pub fn get_api_key(&mut self, hook: GetApiKeyHook) -> &mut Self {
        self.get_api_key = Some(hook);
        self
    }

    /// Run the before hooks in priority order; stop at the first block.
    pub(crate) async fn run_before(&self, mut info: ToolCallInfo) -> Result<Value, String> {
        for (_, hook) in &self.before_tool_call {
            match hook(info.clone()).await {
                BeforeToolCall::Continue => {}
                BeforeToolCall::Rewrite(args) => info.args = args,
                BeforeToolCall::Block { reason } => return Err(reason),
            }
        }
        Ok(info.args)
    }

    pub(crate) async fn run_after(
        &self,
        info: &ToolCallInfo,
        mut outcome: AfterToolCall,
    ) -> AfterToolCall {
        for (_, hook) in &self.after_tool_call {
            outcome = hook(info.clone(), outcome).await;
        }
        outcome
    }
}
