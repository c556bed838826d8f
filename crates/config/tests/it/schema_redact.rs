//! The derived JSON schema and the redaction used when printing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_config::*;
use serde_json::json;

#[test]
fn the_schema_describes_every_top_level_section() {
    let schema = schema_json();
    assert_eq!(schema["title"], "Pincer configuration");
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["additionalProperties"], false,
        "unknown keys are refused"
    );
    let properties: Vec<&str> = schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        properties,
        [
            "$schema", "agent", "agents", "auth", "bindings", "browser", "channels", "cron",
            "gateway", "mcp", "messages", "models", "roles", "session", "skills", "tools"
        ]
    );
    let defs = schema["$defs"].as_object().unwrap();
    assert!(defs.contains_key("ModelSelection"));
    assert_eq!(
        defs["ThinkingLevel"]["enum"],
        json!(["off", "minimal", "low", "medium", "high", "xhigh"])
    );
}

#[test]
fn secrets_are_masked_and_references_shown() {
    let raw = json!({
        "models": {"providers": {
            "a": {"apiKey": "sk-ant-0123456789abcdef", "baseUrl": "http://h"},
            "b": {"apiKey": "${OPENAI_API_KEY}", "headers": {"Authorization": "Bearer abcdefghijkl", "x-trace": "1"}},
            "c": {"apiKey": "short", "models": [{"id": "m", "maxTokens": 8192}]},
        }},
        "session": {"mainKey": "home"},
        "channels": {"telegram": {"botToken": "123456:ABCDEFGHIJ", "secrets": {"password": "hunter22hunter22", "pin": 1234}}},
        "creds": {"access": "acc-0123456789", "refresh": "ref-0123456789", "client_secret": "pre-${X}-post"},
    });
    assert_eq!(
        redact(&raw),
        json!({
            "models": {"providers": {
                "a": {"apiKey": "sk-***def", "baseUrl": "http://h"},
                "b": {"apiKey": "${OPENAI_API_KEY}", "headers": {"Authorization": "Bea***jkl", "x-trace": "***"}},
                "c": {"apiKey": "***", "models": [{"id": "m", "maxTokens": 8192}]},
            }},
            "session": {"mainKey": "home"},
            "channels": {"telegram": {"botToken": "123***HIJ", "secrets": {"password": "hun***r22", "pin": 1234}}},
            "creds": {"access": "acc***789", "refresh": "ref***789", "client_secret": "pre***ost"},
        })
    );
    let key: KeyPath = "models.providers.a.apiKey".parse().unwrap();
    assert_eq!(redacted_get(&raw, &key), Some(json!("sk-***def")));
    let provider: KeyPath = "models.providers.a".parse().unwrap();
    assert_eq!(
        redacted_get(&raw, &provider),
        Some(json!({"apiKey": "sk-***def", "baseUrl": "http://h"}))
    );
    assert_eq!(redacted_get(&raw, &"nope".parse().unwrap()), None);
    assert_eq!(mask("abcdefghijklmnop"), "abc***nop");
    assert_eq!(mask("abcdefghijk"), "***");
}

#[test]
fn every_value_under_headers_and_env_is_masked_at_any_depth() {
    let raw = json!({
        "models": {"providers": {"x": {
            "baseUrl": "http://h",
            "headers": {"Cookie": "session=0123456789abcdef", "X-Auth": "tok", "X-Ref": "${REF}"},
        }}},
        "mcp": {"servers": {"fs": {"command": "npx", "env": {"GITHUB_PAT": "ghp_0123456789abcdef", "DEBUG": 1}}}},
        "Env": {"nested": {"deep": ["a-very-long-value-here", true]}},
        "proxyPassword": "p4ssw0rd-p4ssw0rd",
        "Set-Cookie": "c",
        "clientCredentials": {"id": "app", "pin": 42},
        "private_key_pem": "-----BEGIN-----",
        "PrivateThing": "x",
        "proxyAuthorization": "Basic abcdefghijkl",
        "keys": ["visible"],
        "environment": "visible",
    });
    assert_eq!(
        redact(&raw),
        json!({
            "models": {"providers": {"x": {
                "baseUrl": "http://h",
                "headers": {"Cookie": "ses***def", "X-Auth": "***", "X-Ref": "${REF}"},
            }}},
            "mcp": {"servers": {"fs": {"command": "npx", "env": {"GITHUB_PAT": "ghp***def", "DEBUG": "***"}}}},
            "Env": {"nested": {"deep": ["a-v***ere", "***"]}},
            "proxyPassword": "p4s***0rd",
            "Set-Cookie": "***",
            "clientCredentials": {"id": "***", "pin": "***"},
            "private_key_pem": "---***---",
            "PrivateThing": "***",
            "proxyAuthorization": "Bas***jkl",
            "keys": ["visible"],
            "environment": "visible",
        })
    );
    let headers: KeyPath = "models.providers.x.headers".parse().unwrap();
    assert_eq!(
        redacted_get(&raw, &headers),
        Some(json!({"Cookie": "ses***def", "X-Auth": "***", "X-Ref": "${REF}"}))
    );
    let cookie: KeyPath = "models.providers.x.headers.Cookie".parse().unwrap();
    assert_eq!(redacted_get(&raw, &cookie), Some(json!("ses***def")));
}

/// Finding 9 of the security review: every credential the config holds is a `Secret`, so
/// the derived `Debug` of the whole config (which reaches logs and error reports) shows
/// `Secret(***)` for each and never the value — no hand-written impl to forget one.
#[test]
fn debug_of_the_config_shows_no_credential() {
    let config: pincer_config::PincerConfig = serde_json::from_value(json!({
        "models": {"providers": {"x": {
            "baseUrl": "http://h", "api": "openai-completions",
            "apiKey": "SECRET-provider-key",
            "headers": {"Cookie": "SECRET-cookie", "X-Auth": "SECRET-xauth"},
            "models": [{"id": "m", "headers": {"X-Model": "SECRET-model-header"}}],
        }}},
        "agents": {"defaults": {"memorySearch": {"remote": {"apiKey": "SECRET-embed-key"}}}},
        "gateway": {"auth": {"token": "SECRET-gateway-token"}},
        "channels": {
            "telegram": {"botToken": "SECRET-tg"},
            "discord": {"token": "SECRET-dc"},
            "slack": {"botToken": "SECRET-xoxb", "appToken": "SECRET-xapp"},
            "feishu": {
                "appId": "cli_a", "appSecret": "SECRET-fs",
                "verificationToken": "SECRET-vt", "encryptKey": "SECRET-ek",
            },
        },
    }))
    .unwrap();
    let printed = format!("{config:?}");
    assert_eq!(printed.matches("SECRET").count(), 0, "{printed}");
    assert_eq!(printed.matches("Secret(***)").count(), 13, "{printed}");
    assert!(printed.contains("app_id: Some(\"cli_a\")"), "{printed}");
}

#[test]
fn the_web_tools_and_the_browser_are_configured_strictly() {
    let config = crate::common::parse(
        r#"{
  tools: { web: {
    search: { provider: "searxng", baseUrl: "http://127.0.0.1:8888", maxResults: 3 },
    fetch: { allowHosts: ["nas.lan"], allowPrivateNetwork: false, cacheTtlMinutes: 0 },
  } },
  browser: { headless: false, allowEvaluate: true, idleTimeoutMinutes: 5 },
}"#,
    );
    let web = config.tools.web.unwrap();
    let search = web.search.unwrap();
    assert_eq!(search.provider, Some(WebSearchProviderName::Searxng));
    assert_eq!(search.max_results, Some(3));
    assert_eq!(web.fetch.unwrap().allow_hosts, ["nas.lan"]);
    assert_eq!(config.browser.headless, Some(false));
    assert_eq!(config.browser.allow_evaluate, Some(true));
    assert_eq!(config.browser.idle_timeout_minutes, Some(5));
    // A typo or an unknown provider is an error naming the key.
    let typo = crate::common::error_of(r#"{ browser: { allowEvaluat: true } }"#);
    assert!(typo.to_string().contains("allowEvaluat"), "{typo}");
    let provider =
        crate::common::error_of(r#"{ tools: { web: { search: { provider: "bing" } } } }"#);
    assert!(provider.to_string().contains("bing"), "{provider}");
    // The search key is masked when printed.
    let raw = json!({"tools": {"web": {"search": {"apiKey": "BSA-secret-key-123456"}}}});
    let masked = redact(&raw);
    assert_ne!(
        masked["tools"]["web"]["search"]["apiKey"],
        "BSA-secret-key-123456"
    );
}
