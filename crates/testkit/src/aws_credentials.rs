//! Fake AWS credential endpoints on the mock server, for the Bedrock credential chain:
//! instance metadata (IMDSv2: `PUT /latest/api/token`, then the role and its credentials
//! under `/latest/meta-data/iam/security-credentials/`, each checked for the session
//! token), a container endpoint (`GET /aws/container-credentials`, checked for
//! `Authorization: mock-container-token`) and STS (`POST /sts/` with
//! `Action=AssumeRoleWithWebIdentity`). Each hands out its own access key id, so a test sees
//! which source the chain used.

use axum::extract::Path;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The IMDS session token the fake hands out.
const IMDS_TOKEN: &str = "mock-imds-session-token";
/// The instance role's name.
pub const MOCK_INSTANCE_ROLE: &str = "mock-instance-role";
/// The `Authorization` value the container endpoint wants.
pub const MOCK_CONTAINER_TOKEN: &str = "mock-container-token";
/// Access key ids of the three sources.
pub const IMDS_ACCESS_KEY: &str = "ASIAMOCKIMDS";
pub const CONTAINER_ACCESS_KEY: &str = "ASIAMOCKCONTAINER";
pub const STS_ACCESS_KEY: &str = "ASIAMOCKSTS";

fn credentials_json(key: &str) -> Response {
    axum::Json(json!({
        "Code": "Success",
        "Type": "AWS-HMAC",
        "AccessKeyId": key,
        "SecretAccessKey": "mock-secret",
        "Token": format!("{key}-session"),
        "Expiration": "2099-01-01T00:00:00Z",
    }))
    .into_response()
}

fn imds_token_ok(headers: &HeaderMap) -> bool {
    headers
        .get("x-aws-ec2-metadata-token")
        .is_some_and(|v| v == IMDS_TOKEN)
}

/// `PUT /latest/api/token` (needs the TTL header, as IMDSv2 does).
pub(crate) async fn imds_token(headers: HeaderMap) -> Response {
    if headers
        .get("x-aws-ec2-metadata-token-ttl-seconds")
        .is_none()
    {
        return StatusCode::BAD_REQUEST.into_response();
    }
    IMDS_TOKEN.into_response()
}

/// `GET /latest/meta-data/iam/security-credentials/`: the role's name.
pub(crate) async fn imds_roles(headers: HeaderMap) -> Response {
    if !imds_token_ok(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    MOCK_INSTANCE_ROLE.into_response()
}

/// `GET /latest/meta-data/iam/security-credentials/{role}`.
pub(crate) async fn imds_role(headers: HeaderMap, Path(role): Path<String>) -> Response {
    if !imds_token_ok(&headers) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    if role != MOCK_INSTANCE_ROLE {
        return StatusCode::NOT_FOUND.into_response();
    }
    credentials_json(IMDS_ACCESS_KEY)
}

/// `GET /aws/container-credentials`.
pub(crate) async fn container(headers: HeaderMap) -> Response {
    if headers
        .get("authorization")
        .is_none_or(|v| v != MOCK_CONTAINER_TOKEN)
    {
        return StatusCode::FORBIDDEN.into_response();
    }
    credentials_json(CONTAINER_ACCESS_KEY)
}

/// `POST /sts/`: AssumeRoleWithWebIdentity with a non-empty token and role.
pub(crate) async fn sts(body: String) -> Response {
    let has = |key: &str| {
        body.split('&')
            .filter_map(|pair| pair.split_once('='))
            .any(|(k, v)| k == key && !v.is_empty())
    };
    let xml = |status: StatusCode, text: String| {
        (status, [("content-type", "text/xml")], text).into_response()
    };
    if !body.contains("Action=AssumeRoleWithWebIdentity")
        || !has("RoleArn")
        || !has("WebIdentityToken")
        || !has("RoleSessionName")
    {
        return xml(
            StatusCode::BAD_REQUEST,
            "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameterValue</Code><Message>missing parameters</Message></Error></ErrorResponse>".into(),
        );
    }
    xml(
        StatusCode::OK,
        format!(
            "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><SessionToken>{STS_ACCESS_KEY}-session</SessionToken><SecretAccessKey>mock-secret</SecretAccessKey><Expiration>2099-01-01T00:00:00Z</Expiration><AccessKeyId>{STS_ACCESS_KEY}</AccessKeyId></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>"
        ),
    )
}
