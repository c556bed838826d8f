//! The Cloud Code Assist sign-in's pure parts: the authorize URL, the key it presents, and
//! decisions from loadCodeAssist and operation answers (malformed ones included).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn next(status: u16, body: &str, env: Option<&str>) -> Result<NextStep, String> {
    plan_after_load(status, body.as_bytes(), env).map_err(|e| e.to_string())
}

#[test]
fn the_authorize_url_carries_pis_parameters() {
    let oauth = GeminiCliOAuth::new(GeminiCliOAuthConfig::default());
    let url = oauth.authorize_url("CH", "ST", "http://localhost:8085/oauth2callback");
    assert_eq!(
        url,
        "https://accounts.google.com/o/oauth2/v2/auth?client_id=681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com&response_type=code&redirect_uri=http%3A%2F%2Flocalhost%3A8085%2Foauth2callback&scope=https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fcloud-platform+https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fuserinfo.email+https%3A%2F%2Fwww.googleapis.com%2Fauth%2Fuserinfo.profile&code_challenge=CH&code_challenge_method=S256&state=ST&access_type=offline&prompt=consent"
    );
    assert_eq!(
        api_key("ya29.a", "p-1"),
        r#"{"projectId":"p-1","token":"ya29.a"}"#
    );
}

#[test]
fn load_answers_decide_the_project_or_the_onboarding() {
    assert_eq!(
        next(
            200,
            r#"{"currentTier":{"id":"free-tier"},"cloudaicompanionProject":"p-9"}"#,
            None
        ),
        Ok(NextStep::Project("p-9".into()))
    );
    assert_eq!(
        next(
            200,
            r#"{"currentTier":{"id":"standard-tier"}}"#,
            Some("env-p")
        ),
        Ok(NextStep::Project("env-p".into()))
    );
    let needs = next(200, r#"{"currentTier":{"id":"standard-tier"}}"#, None).unwrap_err();
    assert!(needs.contains("set GOOGLE_CLOUD_PROJECT"), "{needs}");
    assert_eq!(
        next(
            200,
            r#"{"allowedTiers":[{"id":"free-tier","isDefault":true}]}"#,
            Some("env-p")
        ),
        Ok(NextStep::Onboard(
            json!({"tierId": "free-tier", "metadata": {
            "ideType": "IDE_UNSPECIFIED", "platform": "PLATFORM_UNSPECIFIED", "pluginType": "GEMINI"}})
        ))
    );
    // No default tier: legacy, which needs the environment's project.
    assert!(next(200, r#"{"allowedTiers":[{"id":"free-tier"}]}"#, None).is_err());
    assert_eq!(
        next(200, "{}", Some("env-p")),
        Ok(NextStep::Onboard(
            json!({"tierId": "legacy-tier", "cloudaicompanionProject": "env-p",
            "metadata": {"ideType": "IDE_UNSPECIFIED", "platform": "PLATFORM_UNSPECIFIED",
            "pluginType": "GEMINI", "duetProject": "env-p"}})
        ))
    );
    let vpc = r#"{"error":{"code":403,"details":[{"reason":"SECURITY_POLICY_VIOLATED"}]}}"#;
    assert_eq!(
        next(403, vpc, Some("env-p")),
        Ok(NextStep::Project("env-p".into()))
    );
    assert_eq!(
        next(403, r#"{"error":{"message":"nope"}}"#, None).unwrap_err(),
        "Cloud Code Assist: loadCodeAssist failed: HTTP 403: nope"
    );
    for bad in ["", "[", "nul", "\"x\""] {
        assert!(next(200, bad, None).is_err(), "{bad:?}");
    }
    // Ill-typed fields are not a project.
    assert!(
        next(
            200,
            r#"{"currentTier":1,"cloudaicompanionProject":7}"#,
            None
        )
        .is_err()
    );
}

#[test]
fn operations_parse_and_malformed_ones_are_errors() {
    assert_eq!(
        parse_operation(br#"{"name":"operations/1","done":true,"response":{"cloudaicompanionProject":{"id":"p"}}}"#).unwrap(),
        Operation { name: Some("operations/1".into()), done: true, project: Some("p".into()) }
    );
    assert_eq!(
        parse_operation(br#"{"name":"operations/2"}"#).unwrap(),
        Operation {
            name: Some("operations/2".into()),
            done: false,
            project: None
        }
    );
    for bad in [&b""[..], b"[]", b"1", b"{"] {
        assert!(
            parse_operation(bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}
