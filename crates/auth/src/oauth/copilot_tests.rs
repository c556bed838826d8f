//! The Copilot answers, as GitHub sends them and malformed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn device_code_answer_is_read_field_by_field() {
    let body = br#"{"device_code":"dc-1","user_code":"ABCD-1234","verification_uri":"https://github.com/login/device","expires_in":899,"interval":5}"#;
    let device = parse_device_code(body).unwrap();
    assert_eq!(device.device_code.expose(), "dc-1");
    assert_eq!(device.user_code, "ABCD-1234");
    assert_eq!(device.verification_uri, "https://github.com/login/device");
    assert_eq!((device.interval, device.expires_in), (5.0, 899.0));
}

#[test]
fn malformed_device_code_answers_are_typed_errors() {
    let cases: [(&[u8], &str); 5] = [
        (b"<html>", "not JSON"),
        (b"[1]", "not a JSON object"),
        (
            br#"{"user_code":"A","verification_uri":"u","expires_in":1,"interval":1}"#,
            "device_code is missing",
        ),
        (
            br#"{"device_code":"d","user_code":"A","verification_uri":"u","expires_in":1,"interval":"5"}"#,
            "interval is not a non-negative number",
        ),
        (
            br#"{"device_code":"d","user_code":7,"verification_uri":"u","expires_in":1,"interval":1}"#,
            "user_code is not a non-empty string",
        ),
    ];
    for (body, want) in cases {
        match parse_device_code(body) {
            Err(OAuthError::MalformedTokenResponse(what)) => assert_eq!(what, want),
            other => panic!("{}: {other:?}", String::from_utf8_lossy(body)),
        }
    }
}

#[test]
fn poll_answers() {
    assert_eq!(
        parse_device_poll(br#"{"access_token":"gho_x","token_type":"bearer","scope":"read:user"}"#)
            .unwrap(),
        DevicePoll::Token(Secret::new("gho_x"))
    );
    assert_eq!(
        parse_device_poll(br#"{"error":"authorization_pending"}"#).unwrap(),
        DevicePoll::Pending
    );
    assert_eq!(
        parse_device_poll(br#"{"error":"slow_down","interval":10}"#).unwrap(),
        DevicePoll::SlowDown { interval: Some(10) }
    );
    assert_eq!(
        parse_device_poll(br#"{"error":"slow_down"}"#).unwrap(),
        DevicePoll::SlowDown { interval: None }
    );
    assert_eq!(
        parse_device_poll(
            br#"{"error":"expired_token","error_description":"The device code has expired."}"#
        )
        .unwrap(),
        DevicePoll::Failed {
            error: "expired_token".into(),
            description: Some("The device code has expired.".into())
        }
    );
    for body in [
        &b"{}"[..],
        br#"{"access_token":""}"#,
        br#"{"error":5}"#,
        b"nope",
    ] {
        assert!(
            matches!(
                parse_device_poll(body),
                Err(OAuthError::MalformedTokenResponse(_))
            ),
            "{}",
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn copilot_token_expiry_is_five_minutes_early() {
    let body = br#"{"token":"tid=1;exp=2000000000;proxy-ep=proxy.individual.githubcopilot.com;","expires_at":2000000000,"refresh_in":1500}"#;
    let token = parse_copilot_token(body).unwrap();
    assert_eq!(token.expires, 2_000_000_000_000 - 300_000);
    assert!(token.token.expose().starts_with("tid=1;"));
    for (body, want) in [
        (&br#"{"expires_at":1}"#[..], "token is missing"),
        (br#"{"token":"t"}"#, "expires_at is not a positive number"),
        (
            br#"{"token":"t","expires_at":"soon"}"#,
            "expires_at is not a positive number",
        ),
        (
            br#"{"token":"","expires_at":1}"#,
            "token is not a non-empty string",
        ),
    ] {
        match parse_copilot_token(body) {
            Err(OAuthError::MalformedTokenResponse(what)) => assert_eq!(what, want),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn enterprise_domains_are_normalised() {
    assert_eq!(normalize_domain("  ").unwrap(), None);
    assert_eq!(
        normalize_domain("company.ghe.com").unwrap().as_deref(),
        Some("company.ghe.com")
    );
    assert_eq!(
        normalize_domain("https://company.ghe.com/login")
            .unwrap()
            .as_deref(),
        Some("company.ghe.com")
    );
    assert!(matches!(
        normalize_domain("https://"),
        Err(OAuthError::Config(_))
    ));
    let config = CopilotOAuthConfig::for_domain(Some("company.ghe.com"));
    assert_eq!(
        config.device_code_url,
        "https://company.ghe.com/login/device/code"
    );
    assert_eq!(
        config.copilot_token_url,
        "https://api.company.ghe.com/copilot_internal/v2/token"
    );
    assert_eq!(
        CopilotOAuthConfig::default().access_token_url,
        "https://github.com/login/oauth/access_token"
    );
}
