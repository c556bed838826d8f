//! The Azure request (URL, version, deployment, credentials) and a recorded Azure stream.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;
use crate::env::MapEnv;
use crate::providers::openai_responses::OpenAiResponses;
use crate::test_support::{decode, done_message, failure, model};
use crate::types::{Message, StopReason};

fn azure(base_url: &str) -> Model {
    model(
        apis::AZURE_OPENAI_RESPONSES,
        "azure-openai-responses",
        base_url,
        json!({"id": "gpt-4o-mini", "name": "GPT-4o mini"}),
    )
}

fn hello() -> Context {
    Context {
        system_prompt: None,
        messages: vec![Message::user("hi")],
        tools: vec![],
    }
}

fn call(model: &Model, auth: &AzureAuth, env: &[(&str, &str)]) -> Result<HttpCall, String> {
    let env = MapEnv::new(env.iter().copied());
    build_call(model, &hello(), &StreamOptions::default(), auth, &env)
}

fn header<'a>(call: &'a HttpCall, name: &str) -> Option<&'a str> {
    call.headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

#[test]
fn the_key_goes_in_api_key_and_the_version_in_the_query() {
    let key = AzureAuth::ApiKey("az-key".into());
    let c = call(&azure(""), &key, &[(RESOURCE_NAME_VAR, "contoso")]).unwrap();
    assert_eq!(
        c.url,
        "https://contoso.openai.azure.com/openai/v1/responses?api-version=v1"
    );
    assert_eq!(header(&c, "api-key"), Some("az-key"));
    assert_eq!(header(&c, "authorization"), None);
    assert_eq!(c.body["model"], "gpt-4o-mini");
    assert_eq!(c.body["stream"], true);

    // The base URL variable wins over the resource name, the model's own comes last.
    let env = [
        (BASE_URL_VAR, "https://gw.example/openai/v1/"),
        (RESOURCE_NAME_VAR, "contoso"),
        (API_VERSION_VAR, "2025-04-01-preview"),
    ];
    let c = call(&azure("https://model.example/v1"), &key, &env).unwrap();
    assert_eq!(
        c.url,
        "https://gw.example/openai/v1/responses?api-version=2025-04-01-preview"
    );
    let c = call(&azure("https://model.example/v1"), &key, &[]).unwrap();
    assert_eq!(c.url, "https://model.example/v1/responses?api-version=v1");
}

#[test]
fn an_entra_token_is_a_bearer_token() {
    let c = call(
        &azure("https://r.openai.azure.com/openai/v1"),
        &AzureAuth::Bearer("eyJ0".into()),
        &[],
    )
    .unwrap();
    assert_eq!(header(&c, "authorization"), Some("Bearer eyJ0"));
    assert_eq!(header(&c, "api-key"), None);
}

#[test]
fn the_deployment_map_names_the_deployment() {
    let m = azure("https://r.openai.azure.com/openai/v1");
    let map = " gpt-4o=prod-4o , gpt-4o-mini = mini-east,broken,=x,gpt-5=";
    assert_eq!(deployment_name(&m, Some(map)), "mini-east");
    assert_eq!(deployment_name(&m, Some("gpt-4o=prod-4o")), "gpt-4o-mini");
    assert_eq!(deployment_name(&m, None), "gpt-4o-mini");
    let key = AzureAuth::ApiKey("k".into());
    let c = call(&m, &key, &[(DEPLOYMENT_MAP_VAR, map)]).unwrap();
    assert_eq!(c.body["model"], "mini-east");
}

#[test]
fn missing_base_urls_and_odd_versions_are_configuration_errors() {
    let key = AzureAuth::ApiKey("k".into());
    assert_eq!(
        call(&azure(""), &key, &[]).unwrap_err(),
        "Azure OpenAI needs a base URL: set AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME, \
         or give the model a baseUrl"
    );
    assert_eq!(
        call(
            &azure("https://r.example/openai/v1"),
            &key,
            &[(API_VERSION_VAR, "v1&x=1")]
        )
        .unwrap_err(),
        "AZURE_OPENAI_API_VERSION \"v1&x=1\" is not an API version (e.g. v1 or 2025-04-01-preview)"
    );
}

#[tokio::test]
async fn without_any_credential_the_stream_fails_naming_every_option() {
    let provider = AzureOpenAiResponses::new(
        std::sync::Arc::new(MapEnv::default()),
        reqwest::Client::new(),
    );
    let m = azure("https://r.example/openai/v1");
    let events: Vec<_> = {
        use futures_util::StreamExt;
        provider
            .stream(&m, &hello(), StreamOptions::default())
            .collect()
            .await
    };
    let (kind, message) = failure(&events);
    assert_eq!(kind, ErrorKind::Auth);
    assert_eq!(
        message,
        "no credentials for provider azure-openai-responses: set AZURE_OPENAI_API_KEY (or \
         configure a key for it), AZURE_OPENAI_AD_TOKEN, or AZURE_TENANT_ID, AZURE_CLIENT_ID and \
         AZURE_CLIENT_SECRET for a Microsoft Entra ID token"
    );
}

/// A reply as an Azure resource streams it (its model name is the deployment's model
/// version; Azure adds nothing the OpenAI decoder does not read).
#[test]
fn a_recorded_azure_stream_decodes_to_the_reply() {
    let events = [
        r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_0a1b","object":"response","created_at":1764300000,"status":"in_progress","model":"gpt-4o-mini-2024-07-18","output":[],"usage":null}}"#,
        r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_0a1b","type":"message","status":"in_progress","content":[],"role":"assistant"}}"#,
        r#"{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_0a1b","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}}"#,
        r#"{"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_0a1b","output_index":0,"content_index":0,"delta":"Hello from"}"#,
        r#"{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_0a1b","output_index":0,"content_index":0,"delta":" Azure."}"#,
        r#"{"type":"response.output_text.done","sequence_number":5,"item_id":"msg_0a1b","output_index":0,"content_index":0,"text":"Hello from Azure."}"#,
        r#"{"type":"response.output_item.done","sequence_number":6,"output_index":0,"item":{"id":"msg_0a1b","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"Hello from Azure."}]}}"#,
        r#"{"type":"response.completed","sequence_number":7,"response":{"id":"resp_0a1b","object":"response","status":"completed","model":"gpt-4o-mini-2024-07-18","output":[],"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":0},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":14}}}"#,
    ];
    let body: String = events
        .iter()
        .map(|data| {
            let kind = serde_json::from_str::<serde_json::Value>(data).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned();
            format!("event: {kind}\ndata: {data}\n\n")
        })
        .collect();
    let m = azure("https://r.openai.azure.com/openai/v1");
    let decoded = decode(&OpenAiResponses, &m, &[body.as_bytes()]);
    let message = done_message(&decoded, StopReason::Stop);
    assert_eq!(message.text(), "Hello from Azure.");
    assert_eq!(
        (
            message.usage.input,
            message.usage.output,
            message.api.as_str()
        ),
        (9, 5, "azure-openai-responses")
    );
}
