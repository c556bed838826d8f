//! pi's proxy stream (`streamProxy`): instead of calling a provider, POST
//! `{proxyUrl}/api/stream` with `{model, context, options}` and read the server's SSE of
//! bandwidth-stripped events (`ProxyAssistantMessageEvent`), rebuilding the message here.
//! Used by apps whose server holds the provider keys: directly ([`ProxyProvider`]) or as
//! the `proxy` API of a configured provider ([`ConfiguredProxy`]).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::json;

use crate::builder::MessageBuilder;
use crate::client::LazyHttpClient;
use crate::error::ErrorKind;
use crate::event::AssistantStream;
use crate::framing::SseEvent;
use crate::http::{
    DecodeError, Decoded, HttpCall, StreamDecoder, failed_stream, spawn_http_stream,
};
use crate::model::{Model, apis};
use crate::options::StreamOptions;
use crate::providers::join_url;
use crate::registry::ApiProvider;
use crate::types::{Context, StopReason, Usage};

/// Streams any model through a proxy server. Register it under the name `proxy`, or use
/// it directly as the stream function of an agent.
#[derive(Debug, Clone)]
pub struct ProxyProvider {
    proxy_url: String,
    auth_token: String,
    client: reqwest::Client,
}

impl ProxyProvider {
    pub fn new(
        proxy_url: impl Into<String>,
        auth_token: impl Into<String>,
        client: reqwest::Client,
    ) -> Self {
        Self {
            proxy_url: proxy_url.into(),
            auth_token: auth_token.into(),
            client,
        }
    }

    /// The request pi's `streamProxy` sends.
    pub fn build_request(
        &self,
        model: &Model,
        context: &Context,
        options: &StreamOptions,
    ) -> HttpCall {
        let mut body_options = serde_json::Map::new();
        if let Some(t) = options.temperature {
            body_options.insert("temperature".into(), json!(t));
        }
        if let Some(m) = options.max_tokens {
            body_options.insert("maxTokens".into(), json!(m));
        }
        if let Some(r) = options.reasoning {
            body_options.insert("reasoning".into(), json!(r));
        }
        HttpCall::sse(
            join_url(&self.proxy_url, "api/stream"),
            vec![
                (
                    "authorization".into(),
                    format!("Bearer {}", self.auth_token),
                ),
                ("content-type".into(), "application/json".into()),
            ],
            json!({ "model": model, "context": context, "options": body_options }),
        )
    }
}

impl ApiProvider for ProxyProvider {
    fn api(&self) -> &str {
        "proxy"
    }

    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let call = self.build_request(model, context, &options);
        spawn_http_stream(
            self.client.clone(),
            model.clone(),
            call,
            Box::new(ProxyDecoder::default()),
            options,
        )
    }
}

/// The `proxy` API of the models configuration: each model's proxy is its `baseUrl`, its
/// bearer token the provider's key, and the model sent is the one it stands for
/// (`upstream`, by the proxied model's `provider/id`). The reply is the proxied model's,
/// as the user chose it.
#[derive(Debug, Clone)]
pub struct ConfiguredProxy {
    upstream: HashMap<String, Model>,
    client: LazyHttpClient,
}

impl ConfiguredProxy {
    pub fn new(upstream: HashMap<String, Model>) -> Self {
        Self {
            upstream,
            client: LazyHttpClient::new(),
        }
    }
}

impl ApiProvider for ConfiguredProxy {
    fn api(&self) -> &str {
        apis::PROXY
    }

    fn stream(&self, model: &Model, context: &Context, options: StreamOptions) -> AssistantStream {
        let Some(upstream) = self.upstream.get(&model.reference()) else {
            return failed_stream(
                model,
                ErrorKind::Config,
                format!(
                    "{}: a proxy model must name the model it stands for as provider/id",
                    model.reference()
                ),
            );
        };
        let Some(token) = options.api_key.clone().filter(|k| !k.is_empty()) else {
            return failed_stream(
                model,
                ErrorKind::Auth,
                format!(
                    "no token for the proxy provider {0}: set models.providers.{0}.apiKey",
                    model.provider
                ),
            );
        };
        let proxy = ProxyProvider::new(model.base_url.clone(), token, self.client.get().clone());
        let call = proxy.build_request(upstream, context, &options);
        spawn_http_stream(
            self.client.get().clone(),
            model.clone(),
            call,
            Box::new(ProxyDecoder::default()),
            options,
        )
    }
}

/// An event of the proxy's stream. The events of the three kinds of block carry the same
/// fields, so they share their payloads.
#[derive(Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
enum ProxyEvent {
    Start,
    TextStart(Opened),
    TextDelta(Piece),
    TextEnd(Closed),
    ThinkingStart(Opened),
    ThinkingDelta(Piece),
    ThinkingEnd(Closed),
    ToolcallStart {
        content_index: usize,
        id: String,
        tool_name: String,
    },
    ToolcallDelta(Piece),
    ToolcallEnd(Opened),
    Done {
        reason: StopReason,
        usage: Usage,
    },
    Error {
        reason: StopReason,
        error_message: Option<String>,
        usage: Usage,
    },
}

/// A block event that names only its block: a start, or a tool call's end.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Opened {
    content_index: usize,
}

/// A piece of a block's text or arguments.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Piece {
    content_index: usize,
    delta: String,
}

/// The end of a text or thinking block, with its signature if it has one.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Closed {
    content_index: usize,
    content_signature: Option<String>,
}

/// Decodes proxy events. The server's content indices are mapped to ours, so a server
/// that skips or reorders indices cannot corrupt the message.
#[derive(Default)]
pub struct ProxyDecoder {
    indices: HashMap<usize, usize>,
}

impl ProxyDecoder {
    fn index(&self, server: usize) -> Result<usize, DecodeError> {
        self.indices
            .get(&server)
            .copied()
            .ok_or_else(|| DecodeError(format!("proxy event for unknown content index {server}")))
    }

    /// Maps the server's index of a block just opened to ours, `index`.
    fn opened(&mut self, block: Opened, index: usize) {
        self.indices.insert(block.content_index, index);
    }

    /// Ends the text or thinking block `end` names, signed with `sign` if it has a
    /// signature.
    fn close(
        &self,
        end: Closed,
        out: &mut MessageBuilder,
        sign: fn(&mut MessageBuilder, usize, String),
    ) -> Decoded {
        let i = self.index(end.content_index)?;
        if let Some(signature) = end.content_signature {
            sign(out, i, signature);
        }
        out.end(i);
        Ok(())
    }
}

impl StreamDecoder for ProxyDecoder {
    fn on_event(&mut self, event: SseEvent<'_>, out: &mut MessageBuilder) -> Decoded {
        let data = event.data.trim();
        let parsed: ProxyEvent = DecodeError::parse("proxy event", data)?;
        match parsed {
            ProxyEvent::Start => out.start(),
            ProxyEvent::TextStart(block) => self.opened(block, out.text_start()),
            ProxyEvent::ThinkingStart(block) => self.opened(block, out.thinking_start()),
            ProxyEvent::ToolcallStart {
                content_index,
                id,
                tool_name,
            } => {
                let i = out.toolcall_start(&id, &tool_name);
                self.indices.insert(content_index, i);
            }
            ProxyEvent::TextDelta(p) => out.text_delta(self.index(p.content_index)?, &p.delta),
            ProxyEvent::ThinkingDelta(p) => {
                out.thinking_delta(self.index(p.content_index)?, &p.delta);
            }
            ProxyEvent::ToolcallDelta(p) => {
                out.toolcall_delta(self.index(p.content_index)?, &p.delta);
            }
            ProxyEvent::TextEnd(end) => {
                self.close(end, out, |out, i, sig| out.set_text_signature(i, sig))?;
            }
            ProxyEvent::ThinkingEnd(end) => {
                self.close(end, out, |out, i, sig| out.set_thinking_signature(i, sig))?;
            }
            ProxyEvent::ToolcallEnd(block) => out.end(self.index(block.content_index)?),
            ProxyEvent::Done { reason, usage } => {
                *out.usage_mut() = usage;
                out.set_stop_reason(reason);
                out.done();
            }
            ProxyEvent::Error {
                reason,
                error_message,
                usage,
            } => {
                *out.usage_mut() = usage;
                let kind = if reason == StopReason::Aborted {
                    ErrorKind::Aborted
                } else {
                    ErrorKind::Server
                };
                let message =
                    error_message.unwrap_or_else(|| "the proxy reported an error".to_owned());
                out.fail(kind, format!("Proxy error: {message}"));
            }
        }
        Ok(())
    }

    fn finish(&mut self, _out: &mut MessageBuilder) -> Decoded {
        Err(DecodeError(
            "the proxy stream ended without a done or error event".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::AssistantMessageEvent;
    use crate::http::{Framing, decode_recorded};
    use crate::test_support::{decode_with, terminal_count};

    fn model() -> Model {
        crate::providers::stub::model()
    }

    const STREAM: &str = concat!(
        "data: {\"type\":\"start\"}\n\n",
        "data: {\"type\":\"thinking_start\",\"contentIndex\":0}\n\n",
        "data: {\"type\":\"thinking_delta\",\"contentIndex\":0,\"delta\":\"hm\"}\n\n",
        "data: {\"type\":\"thinking_end\",\"contentIndex\":0,\"contentSignature\":\"sig\"}\n\n",
        "data: {\"type\":\"toolcall_start\",\"contentIndex\":1,\"id\":\"c1\",\"toolName\":\"read\"}\n\n",
        "data: {\"type\":\"toolcall_delta\",\"contentIndex\":1,\"delta\":\"{\\\"path\\\":\"}\n\n",
        "data: {\"type\":\"toolcall_delta\",\"contentIndex\":1,\"delta\":\"\\\"a\\\"}\"}\n\n",
        "data: {\"type\":\"toolcall_end\",\"contentIndex\":1}\n\n",
        "data: {\"type\":\"done\",\"reason\":\"toolUse\",\"usage\":{\"input\":5,\"output\":3,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":8,",
        "\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}}\n\n",
    );

    #[test]
    fn rebuilds_message_from_proxy_events() {
        let events = decode_with(&model(), &mut ProxyDecoder::default(), &[STREAM.as_bytes()]);
        let AssistantMessageEvent::Done { reason, message } = events.last().unwrap() else {
            panic!("{events:?}")
        };
        assert_eq!(*reason, StopReason::ToolUse);
        assert_eq!(message.usage.total_tokens, 8);
        assert_eq!(
            message.tool_calls().next().unwrap().arguments,
            json!({"path": "a"})
        );
        let crate::types::ContentBlock::Thinking(t) = &message.content[0] else {
            panic!()
        };
        assert_eq!(
            (t.thinking.as_str(), t.thinking_signature.as_deref()),
            ("hm", Some("sig"))
        );
    }

    #[test]
    fn text_blocks_keep_their_signature() {
        let body = concat!(
            "data: {\"type\":\"start\"}\n\n",
            "data: {\"type\":\"text_start\",\"contentIndex\":3}\n\n",
            "data: {\"type\":\"text_delta\",\"contentIndex\":3,\"delta\":\"hi\"}\n\n",
            "data: {\"type\":\"text_end\",\"contentIndex\":3,\"contentSignature\":\"msg_1\"}\n\n",
            "data: {\"type\":\"done\",\"reason\":\"stop\",\"usage\":{\"input\":1,\"output\":1,\"cacheRead\":0,\"cacheWrite\":0,\"totalTokens\":2,",
            "\"cost\":{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}}}\n\n",
        );
        let events = decode_with(&model(), &mut ProxyDecoder::default(), &[body.as_bytes()]);
        let message = crate::test_support::done_message(&events, StopReason::Stop);
        assert_eq!(
            message.content,
            [crate::types::ContentBlock::Text(
                crate::types::TextContent {
                    text: "hi".into(),
                    text_signature: Some("msg_1".into()),
                }
            )]
        );
    }

    /// Keep-alive events with blank data never reach the decoder (the driver drops them),
    /// which would otherwise fail on them as bad JSON.
    #[test]
    fn blank_events_are_skipped() {
        let decode =
            |body: &str| decode_with(&model(), &mut ProxyDecoder::default(), &[body.as_bytes()]);
        let with_blanks = STREAM.replace("\n\ndata: {", "\n\ndata:\n\ndata: \t\n\ndata: {");
        assert_ne!(with_blanks, STREAM);
        assert_eq!(decode(&with_blanks), decode(STREAM));
        let ndjson = STREAM.replace("data: ", "").replace("\n\n", "\n \t\n");
        let events = decode_recorded(
            &model(),
            Framing::Ndjson,
            &mut ProxyDecoder::default(),
            &[ndjson.as_bytes()],
        );
        assert!(
            matches!(events.last(), Some(AssistantMessageEvent::Done { .. })),
            "{events:?}"
        );
    }

    #[test]
    fn bad_events_are_protocol_errors() {
        for bad in [
            "data: {\"type\":\"text_delta\",\"contentIndex\":9,\"delta\":\"x\"}\n\n",
            "data: {nope\n\n",
            "data: {\"type\":\"start\"}\n\n",
        ] {
            let events = decode_with(&model(), &mut ProxyDecoder::default(), &[bad.as_bytes()]);
            let last = events.last().unwrap();
            assert!(
                matches!(
                    last,
                    AssistantMessageEvent::Error {
                        kind: ErrorKind::Protocol,
                        ..
                    }
                ),
                "{bad}: {last:?}"
            );
            assert_eq!(terminal_count(&events), 1);
        }
    }

    #[test]
    fn request_matches_pi() {
        let p = ProxyProvider::new("http://h:1/", "tok", reqwest::Client::new());
        let ctx = Context {
            system_prompt: Some("s".into()),
            messages: vec![],
            tools: vec![],
        };
        let options = StreamOptions {
            max_tokens: Some(10),
            ..StreamOptions::default()
        };
        let call = p.build_request(&model(), &ctx, &options);
        assert_eq!(call.url, "http://h:1/api/stream");
        assert!(
            call.headers
                .contains(&("authorization".into(), "Bearer tok".into()))
        );
        assert_eq!(call.body["options"], json!({"maxTokens": 10}));
        assert_eq!(
            call.body["context"],
            json!({"systemPrompt": "s", "messages": []})
        );
        assert_eq!(call.body["model"]["id"], "echo");
    }
}
