//! GitHub Copilot as pi-ai treats it: not a wire API of its own but a provider whose
//! models speak `openai-completions`, `openai-responses` or `anthropic-messages`, with a
//! short-lived Copilot token (exchanged from a GitHub token by pincer-auth) as the key.
//! The token names the API host (`proxy-ep=proxy.….githubcopilot.com` → `https://api.…`);
//! the per-request headers (`X-Initiator`, `Openai-Intent`, `Copilot-Vision-Request`) are
//! added where each wire API builds its headers.

use crate::model::Model;
use crate::types::{ContentBlock, Context, Message, UserContent};

/// The provider id.
pub const PROVIDER: &str = "github-copilot";
/// The catalog's base URL: the individual plan's API host.
pub const DEFAULT_BASE_URL: &str = "https://api.individual.githubcopilot.com";

/// The API base URL a Copilot token names: `proxy-ep=proxy.X` → `https://api.X`.
pub fn base_url_from_token(token: &str) -> Option<String> {
    let host = token
        .split(';')
        .find_map(|field| field.trim().strip_prefix("proxy-ep="))
        .filter(|h| !h.is_empty() && !h.contains(['/', ' ', '@', '?', '#']))?;
    let host = host
        .strip_prefix("proxy.")
        .map_or_else(|| host.to_owned(), |rest| format!("api.{rest}"));
    Some(format!("https://{host}"))
}

/// `model` re-pointed at the host its Copilot token names, when it is a Copilot model
/// still on the catalog's default host (a configured base URL wins, as do tokens that
/// name no host).
pub(crate) fn with_token_base_url(model: &Model, key: Option<&str>) -> Option<Model> {
    if model.provider != PROVIDER || model.base_url.trim_end_matches('/') != DEFAULT_BASE_URL {
        return None;
    }
    let base_url = base_url_from_token(key?)?;
    Some(Model {
        base_url,
        ..model.clone()
    })
}

/// pi's dynamic Copilot headers: `X-Initiator` (`agent` when the last message is not the
/// user's: Copilot bills follow-ups differently), `Openai-Intent: conversation-edits`, and
/// `Copilot-Vision-Request: true` when a user message or tool result holds an image.
pub(crate) fn dynamic_headers(context: &Context) -> Vec<(&'static str, String)> {
    let agent = context
        .messages
        .last()
        .is_some_and(|m| !matches!(m, Message::User(_)));
    let mut headers = vec![
        (
            "X-Initiator",
            if agent { "agent" } else { "user" }.to_owned(),
        ),
        ("Openai-Intent", "conversation-edits".to_owned()),
    ];
    let image = |b: &ContentBlock| matches!(b, ContentBlock::Image(_));
    let has_images = context.messages.iter().any(|m| match m {
        Message::User(u) => matches!(&u.content, UserContent::Blocks(b) if b.iter().any(image)),
        Message::ToolResult(r) => r.content.iter().any(image),
        Message::Assistant(_) => false,
    });
    if has_images {
        headers.push(("Copilot-Vision-Request", "true".to_owned()));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_names_the_api_host() {
        assert_eq!(
            base_url_from_token("tid=1;exp=2;proxy-ep=proxy.business.githubcopilot.com;st=dotcom")
                .as_deref(),
            Some("https://api.business.githubcopilot.com")
        );
        assert_eq!(
            base_url_from_token("tid=1;proxy-ep=copilot-proxy.example.com").as_deref(),
            Some("https://copilot-proxy.example.com")
        );
        assert_eq!(base_url_from_token("gho_plain_github_token"), None);
        assert_eq!(base_url_from_token("proxy-ep=evil.com/path;"), None);
        assert_eq!(base_url_from_token("proxy-ep=;"), None);
    }
}
