//! The AWS shared profile files: `~/.aws/credentials` (`[name]` sections) and
//! `~/.aws/config` (`[profile name]`, and `[default]`), overridden by
//! `AWS_SHARED_CREDENTIALS_FILE` / `AWS_CONFIG_FILE`, the profile chosen by `AWS_PROFILE`.
//! A small INI reader (full-line `#`/`;` comments, `key = value`, indented sub-settings
//! skipped) with typed errors; the files are read with tokio::fs, off the async workers.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::credentials::{AwsCredentials, CredentialError, Found};
use crate::env::EnvSource;

/// Larger profile files are refused (they are a few hundred bytes in practice).
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// A line of a profile file that is not INI.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct IniError {
    pub line: usize,
    pub message: String,
}

/// Sections of one INI file, each a map of its keys (later duplicates win, as in the AWS
/// CLI).
pub type IniSections = BTreeMap<String, BTreeMap<String, String>>;

/// Parse an AWS profile file.
pub fn parse_ini(text: &str) -> Result<IniSections, IniError> {
    let mut sections = IniSections::new();
    let mut current: Option<String> = None;
    // The last key had an empty value: indented lines below it are its sub-settings
    // (`s3 =\n  max_concurrent_requests = 10`), which Bedrock does not use.
    let mut in_nested = false;
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let err = |message: &str| IniError {
            line: line_no,
            message: message.to_owned(),
        };
        let indented = raw.starts_with([' ', '\t']);
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.split_once(']').map(|(name, _)| name.trim()) else {
                return Err(err("a section header without its closing ]"));
            };
            if name.is_empty() {
                return Err(err("a section with an empty name"));
            }
            sections.entry(name.to_owned()).or_default();
            current = Some(name.to_owned());
            in_nested = false;
            continue;
        }
        if indented && in_nested {
            continue;
        }
        let Some(section) = &current else {
            return Err(err("a setting before any [section]"));
        };
        let Some((key, value)) = line.split_once('=') else {
            return Err(err("expected key = value"));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(err("a setting with an empty name"));
        }
        let value = value.trim();
        in_nested = value.is_empty();
        sections
            .entry(section.clone())
            .or_default()
            .insert(key.to_owned(), value.to_owned());
    }
    Ok(sections)
}

/// Where the files are and which profile is chosen.
#[derive(Debug, Clone)]
pub(crate) struct ProfileFiles {
    pub name: String,
    /// The profile was named (`AWS_PROFILE`), so a missing one is an error, not a skip.
    pub explicit: bool,
    pub credentials: Option<PathBuf>,
    pub config: Option<PathBuf>,
}

/// The chosen profile's settings, from both files (the credentials file wins).
#[derive(Debug, Clone, Default)]
pub(crate) struct SelectedProfile {
    pub name: String,
    pub explicit: bool,
    pub found: bool,
    pub settings: BTreeMap<String, String>,
}

impl SelectedProfile {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.settings
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

impl ProfileFiles {
    pub fn locate(env: &dyn EnvSource) -> Self {
        let home = env.var("HOME").or_else(|| env.var("USERPROFILE"));
        let default = |file: &str| {
            home.as_ref()
                .map(|h| PathBuf::from(h).join(".aws").join(file))
        };
        let profile = env.var("AWS_PROFILE");
        Self {
            explicit: profile.is_some(),
            name: profile.unwrap_or_else(|| "default".to_owned()),
            credentials: env
                .var("AWS_SHARED_CREDENTIALS_FILE")
                .map(PathBuf::from)
                .or_else(|| default("credentials")),
            config: env
                .var("AWS_CONFIG_FILE")
                .map(PathBuf::from)
                .or_else(|| default("config")),
        }
    }

    /// Read both files (a missing file is empty) and select the profile.
    pub async fn load(&self) -> Result<SelectedProfile, CredentialError> {
        let mut selected = SelectedProfile {
            name: self.name.clone(),
            explicit: self.explicit,
            ..SelectedProfile::default()
        };
        let config_section = if self.name == "default" {
            "default".to_owned()
        } else {
            format!("profile {}", self.name)
        };
        for (path, section) in [
            (&self.config, config_section.as_str()),
            (&self.credentials, self.name.as_str()),
        ] {
            let Some(path) = path else { continue };
            let Some(text) = read_optional(path).await? else {
                continue;
            };
            let mut sections = parse_ini(&text).map_err(|e| {
                CredentialError::source(format!("{}", path.display()), e.to_string())
            })?;
            // `[profile default]` is also accepted in the config file.
            let found = sections
                .remove(section)
                .or_else(|| sections.remove(&format!("profile {}", self.name)));
            if let Some(found) = found {
                selected.found = true;
                selected.settings.extend(found);
            }
        }
        Ok(selected)
    }
}

/// A file's text, or None when it does not exist.
async fn read_optional(path: &std::path::Path) -> Result<Option<String>, CredentialError> {
    let fail = |e: String| CredentialError::source(path.display().to_string(), e);
    match tokio::fs::metadata(path).await {
        Ok(meta) if meta.len() > MAX_FILE_BYTES => {
            return Err(fail(format!("larger than {MAX_FILE_BYTES} bytes")));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(fail(e.to_string())),
    }
    match tokio::fs::read_to_string(path).await {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(fail(e.to_string())),
    }
}

/// The profile's credentials: static keys, or a web-identity role it names.
pub(crate) async fn credentials(
    profile: &SelectedProfile,
    env: &dyn EnvSource,
    http: &reqwest::Client,
) -> Result<Found, CredentialError> {
    let source = format!("profile {}", profile.name);
    if !profile.found {
        return if profile.explicit {
            Err(CredentialError::source(
                source,
                "AWS_PROFILE names a profile that neither ~/.aws/credentials nor ~/.aws/config has",
            ))
        } else {
            Ok(Found::Skip("no default profile".into()))
        };
    }
    match (
        profile.get("aws_access_key_id"),
        profile.get("aws_secret_access_key"),
    ) {
        (Some(id), Some(secret)) => {
            let token = profile.get("aws_session_token").map(str::to_owned);
            return Ok(Found::Credentials(AwsCredentials {
                source,
                ..AwsCredentials::new(id, secret, token)
            }));
        }
        (Some(_), None) => {
            return Err(CredentialError::source(
                source,
                "aws_access_key_id without aws_secret_access_key",
            ));
        }
        _ => {}
    }
    if let (Some(role), Some(file)) = (
        profile.get("role_arn"),
        profile.get("web_identity_token_file"),
    ) {
        let role = super::remote::WebIdentity {
            role_arn: role.to_owned(),
            token_file: PathBuf::from(file),
            session_name: profile.get("role_session_name").map(str::to_owned),
        };
        return super::remote::web_identity(env, http, Some(role)).await;
    }
    let unsupported = [
        "sso_session",
        "sso_start_url",
        "credential_process",
        "source_profile",
    ]
    .into_iter()
    .find(|key| profile.get(key).is_some());
    match unsupported {
        Some(key) => Err(CredentialError::source(
            source,
            format!(
                "uses {key}, which Pincer does not support; export keys for it (`aws configure export-credentials --format env`) or set AWS_BEARER_TOKEN_BEDROCK"
            ),
        )),
        None if profile.explicit => Err(CredentialError::source(
            source,
            "has no aws_access_key_id / aws_secret_access_key",
        )),
        None => Ok(Found::Skip(format!("{source} has no keys"))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_aws_cli_files() {
        let text = "# comment\n; another\n[default]\naws_access_key_id = AKID\naws_secret_access_key=SECRET \n\n[profile work]\nregion = eu-west-1\ns3 =\n  max_concurrent_requests = 10\n  addressing_style = path\noutput = json\n";
        let sections = parse_ini(text).unwrap();
        assert_eq!(sections["default"]["aws_access_key_id"], "AKID");
        assert_eq!(sections["default"]["aws_secret_access_key"], "SECRET");
        let work = &sections["profile work"];
        assert_eq!(work.get("region").map(String::as_str), Some("eu-west-1"));
        assert_eq!(work.get("s3").map(String::as_str), Some(""));
        assert_eq!(work.get("output").map(String::as_str), Some("json"));
        assert!(!work.contains_key("max_concurrent_requests"));
    }

    #[test]
    fn malformed_files_are_typed_errors() {
        for (text, line, message) in [
            ("key = value\n", 1, "a setting before any [section]"),
            (
                "[default\nx = 1\n",
                1,
                "a section header without its closing ]",
            ),
            ("[ ]\n", 1, "a section with an empty name"),
            ("[default]\njust words\n", 2, "expected key = value"),
            ("[default]\n = v\n", 2, "a setting with an empty name"),
        ] {
            assert_eq!(
                parse_ini(text),
                Err(IniError {
                    line,
                    message: message.into()
                }),
                "{text:?}"
            );
        }
        assert_eq!(parse_ini("").unwrap(), IniSections::new());
    }

    fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }

    #[tokio::test]
    async fn the_chosen_profile_from_both_files() {
        let dir = std::env::temp_dir().join(format!("pincer-aws-profile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let creds = write(
            &dir,
            "credentials",
            "[work]\naws_access_key_id = AKW\naws_secret_access_key = SW\naws_session_token = TW\n",
        );
        let config = write(
            &dir,
            "config",
            "[profile work]\nregion = ap-south-1\n[profile sso]\nsso_session = corp\n",
        );
        let env = |profile: &str| {
            crate::env::MapEnv::new([
                ("AWS_PROFILE", profile),
                ("AWS_SHARED_CREDENTIALS_FILE", creds.as_str()),
                ("AWS_CONFIG_FILE", config.as_str()),
            ])
        };
        let http = reqwest::Client::new();
        let work = ProfileFiles::locate(&env("work")).load().await.unwrap();
        assert_eq!(work.get("region"), Some("ap-south-1"));
        let Found::Credentials(c) = credentials(&work, &env("work"), &http).await.unwrap() else {
            panic!("no credentials")
        };
        assert_eq!(
            (c.access_key_id.as_str(), c.source.as_str()),
            ("AKW", "profile work")
        );
        assert_eq!(c.session_token.unwrap().expose(), "TW");

        let sso = ProfileFiles::locate(&env("sso")).load().await.unwrap();
        let err = credentials(&sso, &env("sso"), &http).await.unwrap_err();
        assert!(err.to_string().contains("uses sso_session"), "{err}");
        let missing = ProfileFiles::locate(&env("nope")).load().await.unwrap();
        let err = credentials(&missing, &env("nope"), &http)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("AWS credentials from profile nope: AWS_PROFILE names a profile"),
            "{err}"
        );

        let broken = write(&dir, "broken", "[default]\nnot ini\n");
        let env = crate::env::MapEnv::new([("AWS_CONFIG_FILE", broken.as_str())]);
        let err = ProfileFiles::locate(&env).load().await.unwrap_err();
        assert!(
            err.to_string().ends_with(": line 2: expected key = value"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
