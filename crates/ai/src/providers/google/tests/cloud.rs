//! `google-gemini-cli` (Cloud Code Assist envelope and `{response}` stream), `google-vertex`
//! URLs, and the Application Default Credentials file and token answers, against exact
//! expectations and malformed input.

use std::time::Instant;

use serde_json::{Value, json};

use super::*;
use crate::error::ErrorKind;
use crate::event::AssistantMessageEvent as E;
use crate::options::StreamOptions;
use crate::providers::google::GoogleGeminiCli;
use crate::providers::google::adc::{
    AdcCredentials, AdcError, DEFAULT_TOKEN_URI, parse_credentials, parse_token_answer, pem_to_der,
    service_account_assertion,
};
use crate::providers::google::gemini_cli::{CodeAssistDecoder, parse_key};
use crate::providers::google::vertex::{VertexAuth, vertex_base, vertex_call};
use crate::test_support::{self, assert_kinds, failure, last_message, try_request};
use crate::types::{Context, Message};

fn cli_model() -> Model {
    test_support::model(
        "google-gemini-cli",
        "google-gemini-cli",
        "https://cloudcode-pa.googleapis.com",
        json!({"id": FLASH, "name": "Gemini", "maxTokens": 65535}),
    )
}

fn hello() -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::user("hi")],
        tools: vec![],
    }
}

fn key() -> String {
    json!({"token": "ya29.t", "projectId": "proj-1"}).to_string()
}

#[test]
fn code_assist_request_is_exact() {
    let options = StreamOptions {
        session_id: Some("s-1".into()),
        ..StreamOptions::default()
    };
    let call = try_request(
        &GoogleGeminiCli,
        &cli_model(),
        &hello(),
        &options,
        Some(&key()),
    )
    .unwrap();
    assert_eq!(
        call.url,
        "https://cloudcode-pa.googleapis.com/v1internal:streamGenerateContent?alt=sse"
    );
    let headers: Vec<(&str, &str)> = call
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        headers,
        [
            ("content-type", "application/json"),
            ("accept", "text/event-stream"),
            ("authorization", "Bearer ya29.t"),
            ("user-agent", "google-cloud-sdk vscode_cloudshelleditor/0.1"),
            ("x-goog-api-client", "gl-node/22.17.0"),
            (
                "client-metadata",
                r#"{"ideType":"IDE_UNSPECIFIED","platform":"PLATFORM_UNSPECIFIED","pluginType":"GEMINI"}"#
            ),
        ]
    );
    let mut body = call.body.clone();
    let request_id = body.as_object_mut().unwrap().remove("requestId").unwrap();
    assert!(
        request_id.as_str().unwrap().starts_with("pincer-"),
        "{request_id}"
    );
    assert_eq!(
        body,
        json!({
            "project": "proj-1",
            "model": FLASH,
            "userAgent": "pincer",
            "request": {
                "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                "systemInstruction": {"parts": [{"text": "Be brief."}]},
                "generationConfig": {"maxOutputTokens": 32000},
                "sessionId": "s-1",
            },
        })
    );
}

#[test]
fn a_code_assist_key_must_be_a_sign_in() {
    let hint = "run `pincer auth login google-gemini-cli`";
    assert_eq!(
        parse_key(None).unwrap_err(),
        format!("google-gemini-cli needs a Google sign-in: {hint}")
    );
    assert_eq!(parse_key(Some("  ")), parse_key(None));
    for bad in [
        "ya29.plain-token",
        "[]",
        "{\"token\": 1}",
        "{\"projectId\": \"p\"}",
    ] {
        let error = parse_key(Some(bad)).unwrap_err();
        assert!(
            error.contains("is not a Cloud Code Assist sign-in"),
            "{bad}: {error}"
        );
    }
    let empty = parse_key(Some(r#"{"token": "", "projectId": "p"}"#)).unwrap_err();
    assert_eq!(
        empty,
        format!("the google-gemini-cli credential lacks its token or project; {hint} again")
    );
    assert_eq!(
        parse_key(Some(&key())).unwrap(),
        ("ya29.t".to_owned(), "proj-1".to_owned())
    );
}

fn wrapped(chunks: &[Value]) -> String {
    chunks
        .iter()
        .map(|c| format!("data: {}\r\n\r\n", json!({"response": c, "traceId": "t"})))
        .collect()
}

fn decode_cli(body: &str) -> Vec<E> {
    let model = cli_model();
    let mut decoder = CodeAssistDecoder::new(&model);
    test_support::decode_with(&model, &mut decoder, &[body.as_bytes()])
}

#[test]
fn a_recorded_code_assist_stream_decodes() {
    let body = wrapped(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]}}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]},
            "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}}),
    ]);
    // A trace-only event between chunks is skipped, as pi skips it.
    let body = body.replacen("\r\n\r\n", "\r\n\r\ndata: {\"traceId\":\"t\"}\r\n\r\n", 1);
    let events = decode_cli(&body);
    assert_kinds(
        &events,
        "start text_start text_delta text_delta text_end done",
    );
    let message = last_message(&events);
    assert_eq!(message.text(), "Hello");
    assert_eq!((message.usage.input, message.usage.output), (5, 2));
}

#[test]
fn code_assist_errors_and_malformed_events_fail_cleanly() {
    let events = decode_cli(
        "data: {\"error\": {\"code\": 429, \"message\": \"quota\", \"status\": \"RESOURCE_EXHAUSTED\"}}\r\n\r\n",
    );
    let (kind, message) = failure(&events);
    assert!(matches!(kind, ErrorKind::RateLimited { .. }), "{kind:?}");
    assert!(message.contains("RESOURCE_EXHAUSTED: quota"), "{message}");
    for bad in [
        "data: [1]\r\n\r\n",
        "data: {not json\r\n\r\n",
        "data: \"s\"\r\n\r\n",
    ] {
        let events = decode_cli(bad);
        assert_eq!(failure(&events).0, ErrorKind::Protocol, "{bad}");
    }
    // A stream of only trace events never finished.
    let events = decode_cli("data: {\"traceId\":\"t\"}\r\n\r\n");
    assert_eq!(failure(&events).0, ErrorKind::Protocol);
}

#[test]
fn vertex_urls_follow_location_and_mode() {
    let base = "https://{location}-aiplatform.googleapis.com";
    assert_eq!(
        vertex_base(base, Some("us-central1")),
        "https://us-central1-aiplatform.googleapis.com"
    );
    assert_eq!(
        vertex_base(base, Some("global")),
        "https://aiplatform.googleapis.com"
    );
    assert_eq!(vertex_base(base, None), "https://aiplatform.googleapis.com");
    assert_eq!(
        vertex_base("http://127.0.0.1:9", Some("eu")),
        "http://127.0.0.1:9"
    );
    let m = test_support::model(
        "google-vertex",
        "google-vertex",
        base,
        json!({"id": "gemini-2.5-pro"}),
    );
    let options = StreamOptions::default();
    let adc = VertexAuth::Token {
        token: "ya29.x".into(),
        project: "p-1".into(),
        location: "europe-west4".into(),
    };
    let call = vertex_call(&m, &hello(), &options, &adc);
    assert_eq!(
        call.url,
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/p-1/locations/europe-west4/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert!(
        call.headers
            .contains(&("authorization".into(), "Bearer ya29.x".into()))
    );
    assert!(!call.headers.iter().any(|(n, _)| n == "x-goog-api-key"));
    let express = vertex_call(&m, &hello(), &options, &VertexAuth::ApiKey("k".into()));
    assert_eq!(
        express.url,
        "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    );
    assert!(
        express
            .headers
            .contains(&("x-goog-api-key".into(), "k".into()))
    );
    assert!(!express.headers.iter().any(|(n, _)| n == "authorization"));
    assert_eq!(call.body, express.body);
    assert_eq!(call.body["contents"][0]["parts"][0]["text"], "hi");
}

#[test]
fn credential_files_parse_and_malformed_ones_are_typed_errors() {
    let sa = parse_credentials(
        br#"{"type":"service_account","client_email":"a@p.iam","private_key":"PEM","private_key_id":"k1"}"#,
    )
    .unwrap();
    assert_eq!(
        sa,
        AdcCredentials::ServiceAccount {
            client_email: "a@p.iam".into(),
            private_key: "PEM".into(),
            private_key_id: Some("k1".into()),
            token_uri: DEFAULT_TOKEN_URI.into(),
        }
    );
    // Debug output never shows the key.
    assert!(!format!("{sa:?}").contains("PEM"));
    let user = parse_credentials(
        br#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r","token_uri":"http://127.0.0.1:1/token"}"#,
    )
    .unwrap();
    assert_eq!(
        user,
        AdcCredentials::AuthorizedUser {
            client_id: "c".into(),
            client_secret: "s".into(),
            refresh_token: "r".into(),
            token_uri: "http://127.0.0.1:1/token".into(),
        }
    );
    let cases: [(&[u8], AdcError); 8] = [
        (b"", AdcError::Malformed("not a JSON object (line 1, column 0)".into())),
        (b"[1]", AdcError::Malformed("not a JSON object (line 1, column 0)".into())),
        (b"{}", AdcError::Malformed("type is missing".into())),
        (
            br#"{"type":"external_account"}"#,
            AdcError::UnsupportedType("external_account".into()),
        ),
        (
            br#"{"type":"service_account","private_key":"k"}"#,
            AdcError::Malformed("client_email is missing".into()),
        ),
        (
            br#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":" "}"#,
            AdcError::Malformed("refresh_token is missing".into()),
        ),
        (
            br#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r","token_uri":"file:///etc"}"#,
            AdcError::Malformed("token_uri is not an http(s) URL".into()),
        ),
        (
            br#"{"type":"service_account","client_email":7}"#,
            AdcError::Malformed("not a JSON object (line 1, column 42)".into()),
        ),
    ];
    for (input, expected) in cases {
        let got = parse_credentials(input).unwrap_err();
        let shown = String::from_utf8_lossy(input);
        match (&got, &expected) {
            // serde's column for empty/array input is not worth pinning.
            (AdcError::Malformed(g), AdcError::Malformed(e)) if e.starts_with("not a JSON") => {
                assert!(g.starts_with("not a JSON object"), "{shown}: {g}");
            }
            _ => assert_eq!(got, expected, "{shown}"),
        }
    }
}

#[test]
fn private_keys_are_checked_and_assertions_are_rs256_jwts() {
    assert!(matches!(pem_to_der("no pem"), Err(AdcError::PrivateKey(_))));
    assert!(matches!(
        pem_to_der("-----BEGIN PRIVATE KEY-----\nAAAA"),
        Err(AdcError::PrivateKey(_))
    ));
    assert!(matches!(
        pem_to_der("-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----"),
        Err(AdcError::PrivateKey(_))
    ));
    let not_rsa = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----";
    let error = service_account_assertion("a@b", not_rsa, None, "https://t/token", 1).unwrap_err();
    assert!(
        matches!(error, AdcError::PrivateKey(ref m) if m.starts_with("not an RSA PKCS#8 key")),
        "{error}"
    );

    let key = pincer_testkit::google_cloud::TEST_SERVICE_ACCOUNT_KEY;
    let jwt = service_account_assertion(
        "sa@p.iam",
        key,
        Some("kid-1"),
        "https://t/token",
        1_700_000_000,
    )
    .unwrap();
    let pieces: Vec<&str> = jwt.split('.').collect();
    assert_eq!(pieces.len(), 3);
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let header: Value = serde_json::from_slice(&b64.decode(pieces[0]).unwrap()).unwrap();
    let claims: Value = serde_json::from_slice(&b64.decode(pieces[1]).unwrap()).unwrap();
    assert_eq!(
        header,
        json!({"alg": "RS256", "typ": "JWT", "kid": "kid-1"})
    );
    assert_eq!(
        claims,
        json!({"iss": "sa@p.iam", "scope": "https://www.googleapis.com/auth/cloud-platform",
            "aud": "https://t/token", "iat": 1_700_000_000u64, "exp": 1_700_003_600u64})
    );
    assert_eq!(b64.decode(pieces[2]).unwrap().len(), 256);
}

#[test]
fn token_answers_parse_and_malformed_ones_are_typed_errors() {
    let now = Instant::now();
    let token = parse_token_answer(br#"{"access_token":"ya29.a","expires_in":100}"#, now).unwrap();
    assert_eq!(token.token, "ya29.a");
    assert_eq!(token.expires_at - now, std::time::Duration::from_secs(100));
    for bad in [
        &b"{}"[..],
        b"{\"access_token\":\"\"}",
        b"nope",
        b"{\"access_token\":5}",
    ] {
        assert!(
            matches!(
                parse_token_answer(bad, now),
                Err(AdcError::MalformedToken(_))
            ),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}
