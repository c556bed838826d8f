//! Arbitrary bytes through Azure OpenAI's outside input: a Microsoft Entra ID token
//! endpoint's answer under any status, and `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` values. None
//! may panic; a success must carry a non-empty token.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_ai::providers::openai_responses::azure::deployment_name;
use pincer_ai::providers::openai_responses::entra::parse_token_response;

fuzz_target!(|input: &[u8]| {
    let status = input.first().map_or(200, |b| if b % 2 == 0 { 200 } else { 400 + u16::from(*b) });
    if let Ok(token) = parse_token_response(status, input.get(1..).unwrap_or_default()) {
        assert!(!token.access_token.trim().is_empty());
    }
    if let Ok(text) = std::str::from_utf8(input) {
        let Ok(model) = serde_json::from_value::<pincer_ai::Model>(serde_json::json!({
            "id": "gpt-4o", "name": "GPT-4o", "api": "azure-openai-responses",
            "provider": "azure-openai-responses", "baseUrl": "", "input": ["text"],
            "cost": {"input": 0, "output": 0}, "contextWindow": 1, "maxTokens": 1
        })) else {
            return;
        };
        let _ = deployment_name(&model, Some(text));
    }
});
