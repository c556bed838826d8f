//! The providers of pi's env-key table through the binary: `models` lists them, and
//! `ask` reaches Azure OpenAI (its deployment path, `api-version`, the key in `api-key`)
//! and Z.AI (a built-in provider re-pointed by the config) with keys from the environment.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Home, mock, replies};

#[test]
fn models_lists_a_new_providers_catalog() {
    let run = Home::new().run_ok(&["models", "--provider", "cerebras"]);
    assert_eq!(
        run.stdout(),
        "  cerebras/gpt-oss-120b                                 131072 ctx  GPT OSS 120B\n\
         \x20 cerebras/llama3.1-8b                                   32000 ctx  Llama 3.1 8B\n\
         \x20 cerebras/qwen-3-235b-a22b-instruct-2507               131000 ctx  Qwen 3 235B Instruct\n\
         \x20 cerebras/zai-glm-4.7                                  131072 ctx  Z.AI GLM-4.7\n\
         \n\
         * the model `pincer ask` uses now (--model provider/model changes it)\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_reaches_an_azure_deployment_with_the_key_from_the_environment() {
    let server = mock(replies(&[("hi azure", "Hello from Azure.")])).await;
    let home = Home::new()
        .with_env("AZURE_OPENAI_BASE_URL", &server.azure_base_url())
        .with_env("AZURE_OPENAI_API_KEY", "az-cli-key")
        .with_env("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-4.1=prod-41");
    let out = home.ask_json(&["--model", "azure-openai-responses/gpt-4.1", "hi azure"]);
    assert_eq!(out["result"], "Hello from Azure.", "{out}");
    assert_eq!(
        (out["provider"].as_str(), out["model"].as_str()),
        (Some("azure-openai-responses"), Some("gpt-4.1"))
    );
    let request = server.requests().pop().unwrap();
    assert_eq!(
        (request.path.as_str(), request.query.as_deref()),
        ("/openai/v1/responses", Some("api-version=v1"))
    );
    assert_eq!(request.header("api-key"), Some("az-cli-key"));
    assert_eq!(request.body["model"], "prod-41");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_sends_a_new_providers_key_from_the_environment() {
    let server = mock(replies(&[("hi zai", "Hello from GLM.")])).await;
    let home = Home::new().with_env("ZAI_API_KEY", "zai-cli-key");
    home.write_config(&format!(
        r#"{{ models: {{ providers: {{ zai: {{ baseUrl: "{}" }} }} }} }}"#,
        server.base_url(pincer_testkit::Api::OpenAiCompletions)
    ));
    let out = home.ask_json(&["--model", "zai/glm-4.7", "hi zai"]);
    assert_eq!(out["result"], "Hello from GLM.", "{out}");
    let request = server.requests().pop().unwrap();
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer zai-cli-key"));
    assert_eq!(request.body["model"], "glm-4.7");
}
