//! Credentials fetched over the network: web identity (`AWS_WEB_IDENTITY_TOKEN_FILE` +
//! `AWS_ROLE_ARN` → STS `AssumeRoleWithWebIdentity`), the container endpoint
//! (`AWS_CONTAINER_CREDENTIALS_FULL_URI` / `_RELATIVE_URI`) and instance metadata (IMDSv2 at
//! 169.254.169.254, or `AWS_EC2_METADATA_SERVICE_ENDPOINT`). Every request has its own
//! timeout; token files are read with tokio::fs.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::credentials::{AwsCredentials, CredentialError, Found};
use crate::env::EnvSource;

/// STS answers within seconds or not at all.
const STS_TIMEOUT: Duration = Duration::from_secs(10);
/// The container endpoint is local to the task.
const CONTAINER_TIMEOUT: Duration = Duration::from_secs(2);
/// The AWS SDKs' IMDS timeout: off EC2 the address does not answer, and the chain must not
/// hang there.
const IMDS_TIMEOUT: Duration = Duration::from_secs(1);
/// Larger answers are not credentials.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
const CONTAINER_HOST: &str = "http://169.254.170.2";
const IMDS_ENDPOINT: &str = "http://169.254.169.254";

/// A role to assume with a web identity token.
#[derive(Debug, Clone)]
pub(crate) struct WebIdentity {
    pub role_arn: String,
    pub token_file: PathBuf,
    pub session_name: Option<String>,
}

/// Temporary credentials as the container endpoint and IMDS answer them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
struct JsonCredentials {
    code: Option<String>,
    message: Option<String>,
    access_key_id: Option<String>,
    secret_access_key: Option<String>,
    token: Option<String>,
    expiration: Option<String>,
}

/// Parse a container / IMDS credentials document.
pub fn parse_credentials_json(
    body: &[u8],
    source: &str,
) -> Result<AwsCredentials, CredentialError> {
    let fail = |m: String| CredentialError::source(source, m);
    let doc: JsonCredentials = serde_json::from_slice(body)
        .map_err(|e| fail(format!("the answer is not a credentials document: {e}")))?;
    if let Some(code) = doc.code.as_deref().filter(|c| *c != "Success") {
        return Err(fail(format!("{code}: {}", doc.message.unwrap_or_default())));
    }
    let (Some(id), Some(secret)) = (doc.access_key_id, doc.secret_access_key) else {
        return Err(fail(
            "the answer has no AccessKeyId / SecretAccessKey".into(),
        ));
    };
    let expires_at_ms = match doc.expiration.as_deref() {
        Some(text) => Some(
            pincer_base::time::ms_from_iso(text)
                .ok_or_else(|| fail(format!("unreadable Expiration {text:?}")))?,
        ),
        None => None,
    };
    Ok(AwsCredentials {
        expires_at_ms,
        source: source.to_owned(),
        ..AwsCredentials::new(&id, &secret, doc.token)
    })
}

/// The text of `<tag>…</tag>` inside `xml`, entities decoded.
fn xml_text(xml: &str, tag: &str) -> Option<String> {
    let open = format!("<{tag}>");
    let start = xml.find(&open)? + open.len();
    let end = start + xml[start..].find(&format!("</{tag}>"))?;
    Some(
        xml[start..end]
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&"),
    )
}

/// Parse STS's `AssumeRoleWithWebIdentity` answer (or its `ErrorResponse`).
pub fn parse_sts_response(xml: &str) -> Result<AwsCredentials, CredentialError> {
    let source = "web identity (STS)";
    let fail = |m: String| CredentialError::source(source, m);
    if let Some(error) = xml_text(xml, "Error") {
        let code = xml_text(&error, "Code").unwrap_or_default();
        let message = xml_text(&error, "Message").unwrap_or_default();
        return Err(fail(format!("{code}: {message}")));
    }
    let creds = xml_text(xml, "Credentials")
        .ok_or_else(|| fail("the answer has no <Credentials>".into()))?;
    let field =
        |tag: &str| xml_text(&creds, tag).ok_or_else(|| fail(format!("the answer has no <{tag}>")));
    let expiration = field("Expiration")?;
    let expires = pincer_base::time::ms_from_iso(&expiration)
        .ok_or_else(|| fail(format!("unreadable Expiration {expiration:?}")))?;
    Ok(AwsCredentials {
        expires_at_ms: Some(expires),
        source: source.to_owned(),
        ..AwsCredentials::new(
            &field("AccessKeyId")?,
            &field("SecretAccessKey")?,
            Some(field("SessionToken")?),
        )
    })
}

/// A body read with a cap, as text.
async fn read_capped(response: reqwest::Response, source: &str) -> Result<String, CredentialError> {
    let bytes = response
        .bytes()
        .await
        .map_err(|e| CredentialError::source(source, format!("reading the answer: {e}")))?;
    if bytes.len() > MAX_ANSWER_BYTES {
        return Err(CredentialError::source(source, "the answer is too large"));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn send_error(source: &str, e: &reqwest::Error) -> CredentialError {
    CredentialError::source(source, pincer_base::error_chain::error_chain(e))
}

/// `AWS_WEB_IDENTITY_TOKEN_FILE` + `AWS_ROLE_ARN` (or a profile's `role`) → STS.
pub(crate) async fn web_identity(
    env: &dyn EnvSource,
    http: &reqwest::Client,
    role: Option<WebIdentity>,
) -> Result<Found, CredentialError> {
    let source = "web identity";
    let role = match role {
        Some(role) => role,
        None => match (
            env.var("AWS_WEB_IDENTITY_TOKEN_FILE"),
            env.var("AWS_ROLE_ARN"),
        ) {
            (Some(file), Some(role_arn)) => WebIdentity {
                role_arn,
                token_file: PathBuf::from(file),
                session_name: env.var("AWS_ROLE_SESSION_NAME"),
            },
            (Some(_), None) => {
                return Err(CredentialError::source(
                    source,
                    "AWS_WEB_IDENTITY_TOKEN_FILE is set but AWS_ROLE_ARN is not",
                ));
            }
            _ => return Ok(Found::Skip("no AWS_WEB_IDENTITY_TOKEN_FILE".into())),
        },
    };
    let token = tokio::fs::read_to_string(&role.token_file)
        .await
        .map_err(|e| {
            CredentialError::source(
                source,
                format!("reading {}: {e}", role.token_file.display()),
            )
        })?;
    let endpoint = match env.var("AWS_ENDPOINT_URL_STS") {
        Some(url) => url,
        None => match env
            .var("AWS_REGION")
            .or_else(|| env.var("AWS_DEFAULT_REGION"))
        {
            Some(region) => format!("https://sts.{region}.amazonaws.com"),
            None => "https://sts.amazonaws.com".to_owned(),
        },
    };
    let session = role
        .session_name
        .unwrap_or_else(|| format!("pincer-{}", pincer_base::time::now_ms()));
    let form = [
        ("Action", "AssumeRoleWithWebIdentity"),
        ("Version", "2011-06-15"),
        ("RoleArn", role.role_arn.as_str()),
        ("RoleSessionName", session.as_str()),
        ("WebIdentityToken", token.trim()),
    ];
    let body: String = form
        .iter()
        .map(|(k, v)| format!("{k}={}", super::sigv4::uri_encode(v, false)))
        .collect::<Vec<_>>()
        .join("&");
    let response = http
        .post(format!("{}/", endpoint.trim_end_matches('/')))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .timeout(STS_TIMEOUT)
        .send()
        .await
        .map_err(|e| send_error(source, &e))?;
    let text = read_capped(response, source).await?;
    parse_sts_response(&text).map(Found::Credentials)
}

fn allowed_container_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    match parsed.scheme() {
        "https" => true,
        "http" => {
            let host = parsed.host_str().unwrap_or("");
            let host = host.trim_start_matches('[').trim_end_matches(']');
            match host.parse::<std::net::IpAddr>() {
                Ok(std::net::IpAddr::V4(ip)) => {
                    ip.is_loopback()
                        || ip.octets() == [169, 254, 170, 2]
                        || ip.octets() == [169, 254, 170, 23]
                }
                Ok(std::net::IpAddr::V6(ip)) => {
                    ip.is_loopback() || ip.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23]
                }
                Err(_) => host == "localhost",
            }
        }
        _ => false,
    }
}

/// The ECS / EKS Pod Identity container endpoint.
pub(crate) async fn container(
    env: &dyn EnvSource,
    http: &reqwest::Client,
) -> Result<Found, CredentialError> {
    let source = "container credentials";
    let url = match (
        env.var("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"),
        env.var("AWS_CONTAINER_CREDENTIALS_FULL_URI"),
    ) {
        (Some(relative), _) => format!("{CONTAINER_HOST}{relative}"),
        (None, Some(full)) => full,
        (None, None) => return Ok(Found::Skip("no container credentials endpoint".into())),
    };
    if !allowed_container_url(&url) {
        return Err(CredentialError::source(
            source,
            format!("{url} is neither https nor a local container address"),
        ));
    }
    let token = match (
        env.var("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"),
        env.var("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    ) {
        (Some(file), _) => Some(
            tokio::fs::read_to_string(&file)
                .await
                .map_err(|e| CredentialError::source(source, format!("reading {file}: {e}")))?
                .trim()
                .to_owned(),
        ),
        (None, token) => token,
    };
    let mut request = http.get(&url).timeout(CONTAINER_TIMEOUT);
    if let Some(token) = token {
        request = request.header("authorization", token);
    }
    let response = request.send().await.map_err(|e| send_error(source, &e))?;
    if !response.status().is_success() {
        return Err(CredentialError::source(
            source,
            format!("HTTP {}", response.status()),
        ));
    }
    let text = read_capped(response, source).await?;
    parse_credentials_json(text.as_bytes(), source).map(Found::Credentials)
}

/// IMDSv2: a session token (PUT), the instance role's name, then its credentials.
pub(crate) async fn instance_metadata(
    env: &dyn EnvSource,
    http: &reqwest::Client,
) -> Result<Found, CredentialError> {
    let source = "instance metadata";
    if env
        .var("AWS_EC2_METADATA_DISABLED")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return Ok(Found::Skip("instance metadata disabled".into()));
    }
    let base = env
        .var("AWS_EC2_METADATA_SERVICE_ENDPOINT")
        .unwrap_or_else(|| IMDS_ENDPOINT.to_owned());
    let base = base.trim_end_matches('/');
    // Off EC2 nothing answers: that means "not here", not an error.
    let token = match http
        .put(format!("{base}/latest/api/token"))
        .header("x-aws-ec2-metadata-token-ttl-seconds", "21600")
        .timeout(IMDS_TIMEOUT)
        .send()
        .await
    {
        Ok(r) if r.status().is_success() => read_capped(r, source).await?,
        Ok(r) => {
            return Ok(Found::Skip(format!(
                "instance metadata answered HTTP {}",
                r.status()
            )));
        }
        Err(_) => return Ok(Found::Skip("no instance metadata service".into())),
    };
    let get = |path: String| {
        http.get(format!(
            "{base}/latest/meta-data/iam/security-credentials/{path}"
        ))
        .header("x-aws-ec2-metadata-token", token.trim())
        .timeout(IMDS_TIMEOUT)
        .send()
    };
    let roles = get(String::new())
        .await
        .map_err(|e| send_error(source, &e))?;
    if !roles.status().is_success() {
        return Ok(Found::Skip(format!(
            "no instance role (HTTP {})",
            roles.status()
        )));
    }
    let roles = read_capped(roles, source).await?;
    let Some(role) = roles.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Ok(Found::Skip("no instance role".into()));
    };
    let answer = get(super::sigv4::uri_encode(role, false))
        .await
        .map_err(|e| send_error(source, &e))?;
    if !answer.status().is_success() {
        return Err(CredentialError::source(
            source,
            format!("HTTP {} for role {role}", answer.status()),
        ));
    }
    let text = read_capped(answer, source).await?;
    parse_credentials_json(text.as_bytes(), source).map(Found::Credentials)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const STS_OK: &str = r#"<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>amzn1.account.AF6RHO7KZU5XRVQJGXK6HB56KR2A</SubjectFromWebIdentityToken>
    <Credentials>
      <SessionToken>AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE&amp;x</SessionToken>
      <SecretAccessKey>wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY</SecretAccessKey>
      <Expiration>2014-10-24T23:00:23Z</Expiration>
      <AccessKeyId>ASgeIAIOSFODNN7EXAMPLE</AccessKeyId>
    </Credentials>
  </AssumeRoleWithWebIdentityResult>
</AssumeRoleWithWebIdentityResponse>"#;

    #[test]
    fn sts_answers() {
        let c = parse_sts_response(STS_OK).unwrap();
        assert_eq!(c.access_key_id, "ASgeIAIOSFODNN7EXAMPLE");
        assert_eq!(
            c.secret_access_key.expose(),
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
        );
        assert_eq!(
            c.session_token.unwrap().expose(),
            "AQoDYXdzEE0a8ANXXXXXXXXNO1ewxE5TijQyp+IEXAMPLE&x"
        );
        assert_eq!(c.expires_at_ms, Some(1_414_191_623_000));
        let refused = "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>Token expired</Message></Error></ErrorResponse>";
        assert_eq!(
            parse_sts_response(refused).unwrap_err().to_string(),
            "AWS credentials from web identity (STS): InvalidIdentityToken: Token expired"
        );
        for bad in [
            "",
            "<Credentials>",
            "<Credentials><AccessKeyId>a</AccessKeyId></Credentials>",
            "<Credentials><AccessKeyId>a</AccessKeyId><SecretAccessKey>b</SecretAccessKey><SessionToken>c</SessionToken><Expiration>soon</Expiration></Credentials>",
        ] {
            assert!(parse_sts_response(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn json_answers() {
        let ok = br#"{"Code":"Success","Type":"AWS-HMAC","AccessKeyId":"ASIA","SecretAccessKey":"S","Token":"T","Expiration":"2030-01-01T00:00:00Z"}"#;
        let c = parse_credentials_json(ok, "instance metadata").unwrap();
        assert_eq!(
            (c.access_key_id.as_str(), c.expires_at_ms),
            ("ASIA", Some(1_893_456_000_000))
        );
        let failed = br#"{"Code":"AssumeRoleUnauthorizedAccess","Message":"denied"}"#;
        assert_eq!(
            parse_credentials_json(failed, "x").unwrap_err().to_string(),
            "AWS credentials from x: AssumeRoleUnauthorizedAccess: denied"
        );
        for bad in [
            &b"not json"[..],
            b"{}",
            br#"{"AccessKeyId":"a","SecretAccessKey":"b","Expiration":"x"}"#,
        ] {
            assert!(parse_credentials_json(bad, "x").is_err());
        }
    }

    #[test]
    fn container_urls_must_be_local_or_https() {
        assert!(allowed_container_url(
            "http://169.254.170.2/v2/credentials/x"
        ));
        assert!(allowed_container_url("http://127.0.0.1:8080/creds"));
        assert!(allowed_container_url("https://example.com/creds"));
        assert!(!allowed_container_url("http://example.com/creds"));
        assert!(!allowed_container_url("file:///etc/passwd"));
    }
}
