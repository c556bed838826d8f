//! `tools.exec.sandbox`, `agents.defaults.sandbox` and `agents.list[].sandbox`: whether an
//! agent's commands (`exec`, background processes, the RPC workers' `bash`) run in a
//! sandbox. A backend name (`"off"`, `"bwrap"`, `"landlock"`) or OpenClaw's object form
//! `{ mode: off|non-main|all, backend, network, readOnly, readWrite }`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A sandbox backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SandboxBackendName {
    Off,
    Bwrap,
    Landlock,
}

/// Which sessions are sandboxed (OpenClaw's `sandbox.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxModeName {
    Off,
    /// Every session except the agent's main one (`agent:<id>:main`).
    NonMain,
    All,
}

/// The object form.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxConfig {
    /// off, non-main or all (default all when a backend is named).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<SandboxModeName>,
    /// bwrap or landlock (off: no sandbox).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<SandboxBackendName>,
    /// Network access inside the sandbox (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    /// Extra absolute paths readable inside (e.g. a toolchain in the home directory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<String>,
    /// Extra absolute paths writable inside.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_write: Vec<String>,
}

/// `"bwrap"` or `{ mode, backend, … }`. Deserialize by hand (as `ModelSelection`) so an
/// error in the object keeps its key path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum SandboxSetting {
    Backend(SandboxBackendName),
    Full(SandboxConfig),
}

impl<'de> Deserialize<'de> for SandboxSetting {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SettingVisitor;

        impl<'de> serde::de::Visitor<'de> for SettingVisitor {
            type Value = SandboxSetting;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("\"off\", \"bwrap\", \"landlock\" or { mode, backend, network }")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                SandboxBackendName::deserialize(serde::de::value::StrDeserializer::new(v))
                    .map(SandboxSetting::Backend)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                SandboxConfig::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(SandboxSetting::Full)
            }
        }

        deserializer.deserialize_any(SettingVisitor)
    }
}

/// What a setting comes to: no sandbox, or a backend for some sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSandbox {
    pub backend: SandboxBackendName,
    /// `NonMain` or `All` (`Off` resolves to `None`).
    pub mode: SandboxModeName,
    pub network: bool,
    pub read_only: Vec<String>,
    pub read_write: Vec<String>,
}

impl ResolvedSandbox {
    /// Whether the session `session_key` of agent `agent_id` runs sandboxed.
    pub fn applies_to(&self, agent_id: &str, session_key: Option<&str>) -> bool {
        match self.mode {
            SandboxModeName::Off => false,
            SandboxModeName::All => true,
            SandboxModeName::NonMain => {
                session_key != Some(format!("agent:{agent_id}:main").as_str())
            }
        }
    }
}

impl SandboxSetting {
    /// `None` when this says no sandbox (backend or mode `off`, or an object without a
    /// backend).
    pub fn resolve(&self) -> Option<ResolvedSandbox> {
        let (backend, config) = match self {
            Self::Backend(backend) => (*backend, None),
            Self::Full(config) => (config.backend?, Some(config)),
        };
        let mode = config.and_then(|c| c.mode).unwrap_or(SandboxModeName::All);
        if backend == SandboxBackendName::Off || mode == SandboxModeName::Off {
            return None;
        }
        Some(ResolvedSandbox {
            backend,
            mode,
            network: config.and_then(|c| c.network).unwrap_or(false),
            read_only: config.map(|c| c.read_only.clone()).unwrap_or_default(),
            read_write: config.map(|c| c.read_write.clone()).unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<SandboxSetting, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn both_forms_resolve() {
        let bwrap = parse(r#""bwrap""#).unwrap().resolve().unwrap();
        assert_eq!(
            bwrap,
            ResolvedSandbox {
                backend: SandboxBackendName::Bwrap,
                mode: SandboxModeName::All,
                network: false,
                read_only: vec![],
                read_write: vec![],
            }
        );
        assert_eq!(parse(r#""off""#).unwrap().resolve(), None);
        let full = parse(
            r#"{"mode":"non-main","backend":"landlock","network":true,"readOnly":["/opt/x"]}"#,
        )
        .unwrap()
        .resolve()
        .unwrap();
        assert_eq!(full.backend, SandboxBackendName::Landlock);
        assert_eq!(full.mode, SandboxModeName::NonMain);
        assert!(full.network);
        assert_eq!(full.read_only, ["/opt/x"]);
        assert!(!full.applies_to("main", Some("agent:main:main")));
        assert!(full.applies_to("main", Some("agent:main:telegram:dm:1")));
        assert!(full.applies_to("main", None));
        assert_eq!(
            parse(r#"{"mode":"off","backend":"bwrap"}"#)
                .unwrap()
                .resolve(),
            None
        );
        assert_eq!(parse(r#"{"mode":"all"}"#).unwrap().resolve(), None);
    }

    #[test]
    fn malformed_settings_say_what_was_expected() {
        assert_eq!(
            parse(r#""docker""#).unwrap_err(),
            "unknown variant `docker`, expected one of `off`, `bwrap`, `landlock` at line 1 column 8"
        );
        assert!(
            parse(r#"{"backend":"bwrap","netwrk":true}"#)
                .unwrap_err()
                .starts_with("unknown field `netwrk`")
        );
        assert!(parse("3").unwrap_err().starts_with(
            "invalid type: integer `3`, expected \"off\", \"bwrap\", \"landlock\" or { mode, backend, network }"
        ));
    }
}
