//! A worker's capability profile (pi-gateway's `capability-profile.ts`): what a worker
//! process was started with, split by what can change after it started.
//!
//! - **Hard** arguments (tools, system prompts, discovery switches), the role, the working
//!   directory and the environment are fixed for the life of the process.
//! - **Soft** arguments (provider, model, thinking level) can be changed with RPC commands
//!   (`set_model`, `set_thinking_level`).
//! - **Soft resources** (skills, extensions, prompt templates): a worker that has more of
//!   them than asked for can serve the request.
//!
//! [`CapabilityProfile::signature`] hashes everything (an exact match);
//! [`CapabilityProfile::hard_signature`] hashes only what cannot change (a worker with the
//! same hard signature can be adapted). Both are SHA-256, hex, over a canonical encoding,
//! so equal profiles hash equally whatever order their sets were filled in.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use sha2::{Digest, Sha256};

/// What a worker is started with.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CapabilityProfile {
    /// Who the worker acts as (pi-gateway's role; Pincer's gateway: `<agent id>/<role>`).
    pub role: String,
    pub cwd: PathBuf,
    /// Arguments fixed for the process's life, in order (`--tools a,b`, `--system-prompt …`,
    /// `--no-extensions`, …).
    pub hard_args: Vec<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    pub skills: BTreeSet<String>,
    pub extensions: BTreeSet<String>,
    pub prompt_templates: BTreeSet<String>,
    /// Extra environment of the process.
    pub env: BTreeMap<String, String>,
}

impl std::fmt::Debug for CapabilityProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Environment values may be secrets (tokens): names only.
        f.debug_struct("CapabilityProfile")
            .field("role", &self.role)
            .field("cwd", &self.cwd)
            .field("hard_args", &self.hard_args)
            .field("provider", &self.provider)
            .field("model", &self.model)
            .field("thinking", &self.thinking)
            .field("skills", &self.skills)
            .field("extensions", &self.extensions)
            .field("prompt_templates", &self.prompt_templates)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl CapabilityProfile {
    /// SHA-256 of everything: a worker with this signature serves the profile as it is.
    pub fn signature(&self) -> String {
        let mut hash = Sha256::new();
        self.feed_hard(&mut hash);
        field(
            &mut hash,
            "provider",
            self.provider.as_deref().unwrap_or(""),
        );
        field(&mut hash, "model", self.model.as_deref().unwrap_or(""));
        field(
            &mut hash,
            "thinking",
            self.thinking.as_deref().unwrap_or(""),
        );
        for (name, set) in [
            ("skill", &self.skills),
            ("extension", &self.extensions),
            ("template", &self.prompt_templates),
        ] {
            for item in set {
                field(&mut hash, name, item);
            }
        }
        hex(hash.finalize().as_slice())
    }

    /// SHA-256 of the role, the directory, the hard arguments and the environment: what a
    /// running worker cannot change.
    pub fn hard_signature(&self) -> String {
        let mut hash = Sha256::new();
        self.feed_hard(&mut hash);
        hex(hash.finalize().as_slice())
    }

    fn feed_hard(&self, hash: &mut Sha256) {
        field(hash, "role", &self.role);
        field(hash, "cwd", &self.cwd.to_string_lossy());
        for arg in &self.hard_args {
            field(hash, "arg", arg);
        }
        for (name, value) in &self.env {
            field(hash, "env", name);
            field(hash, "=", value);
        }
    }

    /// Whether a worker started with `self` has every soft resource `wanted` asks for.
    pub fn has_resources_for(&self, wanted: &CapabilityProfile) -> bool {
        wanted.skills.is_subset(&self.skills)
            && wanted.extensions.is_subset(&self.extensions)
            && wanted.prompt_templates.is_subset(&self.prompt_templates)
    }

    /// The command-line arguments after the worker's own (`rpc` / `--mode rpc`): hard
    /// arguments, then the soft ones, then one flag per resource.
    pub fn args(&self) -> Vec<String> {
        let mut args = self.hard_args.clone();
        for (flag, value) in [
            ("--provider", &self.provider),
            ("--model", &self.model),
            ("--thinking", &self.thinking),
        ] {
            if let Some(value) = value {
                args.push(flag.to_owned());
                args.push(value.clone());
            }
        }
        for (flag, set) in [
            ("--skill", &self.skills),
            ("--extension", &self.extensions),
            ("--prompt-template", &self.prompt_templates),
        ] {
            for item in set {
                args.push(flag.to_owned());
                args.push(item.clone());
            }
        }
        args
    }
}

/// One length-prefixed field: `a`,`bc` and `ab`,`c` hash differently.
fn field(hash: &mut Sha256, name: &str, value: &str) {
    for part in [name, value] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> CapabilityProfile {
        CapabilityProfile {
            role: "main".into(),
            cwd: "/work".into(),
            hard_args: vec!["--tools".into(), "read,bash".into()],
            provider: Some("mock".into()),
            model: Some("primary".into()),
            thinking: Some("off".into()),
            skills: ["a".to_owned(), "b".to_owned()].into(),
            env: [("TOKEN".to_owned(), "s3cret".to_owned())].into(),
            ..CapabilityProfile::default()
        }
    }

    #[test]
    fn soft_changes_keep_the_hard_signature() {
        let base = profile();
        let other_model = CapabilityProfile {
            model: Some("backup".into()),
            skills: ["a".to_owned()].into(),
            ..profile()
        };
        assert_ne!(base.signature(), other_model.signature());
        assert_eq!(base.hard_signature(), other_model.hard_signature());
        assert_eq!(base.signature(), profile().signature());
        assert_eq!(base.signature().len(), 64);
    }

    #[test]
    fn hard_changes_change_both() {
        let base = profile();
        for changed in [
            CapabilityProfile {
                role: "ops".into(),
                ..profile()
            },
            CapabilityProfile {
                cwd: "/elsewhere".into(),
                ..profile()
            },
            CapabilityProfile {
                hard_args: vec!["--tools".into(), "read".into()],
                ..profile()
            },
            CapabilityProfile {
                env: [("TOKEN".to_owned(), "other".to_owned())].into(),
                ..profile()
            },
        ] {
            assert_ne!(
                base.hard_signature(),
                changed.hard_signature(),
                "{changed:?}"
            );
            assert_ne!(base.signature(), changed.signature());
        }
    }

    #[test]
    fn boundaries_between_fields_matter() {
        let a = CapabilityProfile {
            hard_args: vec!["ab".into(), "c".into()],
            ..CapabilityProfile::default()
        };
        let b = CapabilityProfile {
            hard_args: vec!["a".into(), "bc".into()],
            ..CapabilityProfile::default()
        };
        assert_ne!(a.signature(), b.signature());
    }

    #[test]
    fn resources_superset_and_args() {
        let worker = profile();
        let wants_fewer = CapabilityProfile {
            skills: ["b".to_owned()].into(),
            ..profile()
        };
        let wants_more = CapabilityProfile {
            skills: ["c".to_owned()].into(),
            ..profile()
        };
        assert!(worker.has_resources_for(&wants_fewer));
        assert!(!worker.has_resources_for(&wants_more));
        assert_eq!(
            worker.args(),
            [
                "--tools",
                "read,bash",
                "--provider",
                "mock",
                "--model",
                "primary",
                "--thinking",
                "off",
                "--skill",
                "a",
                "--skill",
                "b"
            ]
        );
        let debug = format!("{worker:?}");
        assert!(
            debug.contains("TOKEN") && !debug.contains("s3cret"),
            "{debug}"
        );
    }
}
