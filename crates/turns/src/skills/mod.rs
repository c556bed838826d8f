//! Skills: `<root>/<dir>/SKILL.md` files (AgentSkills format) that teach an agent a task.
//! The model sees a compact list (name, description, location) and reads a skill's file
//! when a task matches it.
//!
//! This module owns finding skills in the standard roots by precedence (a name found in a
//! higher root hides the same name lower down), reading their frontmatter, reporting what is
//! wrong with a skill without ever failing the whole load, and the prompt listing in the
//! XML form OpenClaw injects (pi-coding-agent's `formatSkillsForPrompt`).

mod frontmatter;

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use pincer_config::SkillsConfig;

use crate::workspace::expand_user_path;

pub use frontmatter::{FrontmatterError, parse_frontmatter};

/// The file that makes a directory a skill.
pub const SKILL_FILE: &str = "SKILL.md";
/// A SKILL.md larger than this is refused: skills are short instructions, and the limit
/// keeps a stray huge file from being read into memory on every load.
pub const MAX_SKILL_FILE_BYTES: u64 = 1024 * 1024;

/// Where a skill was found, highest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SkillSource {
    /// `<workspace>/skills`: this agent's own skills.
    Workspace,
    /// `<workspace>/.agents/skills`: the project's agent skills.
    WorkspaceAgents,
    /// `~/.agents/skills`: the user's personal agent skills.
    PersonalAgents,
    /// `$PINCER_HOME/skills`: skills shared by every agent.
    Managed,
    /// `skills.load.extraDirs` (a directory of skills, or one skill's directory or
    /// SKILL.md), lowest precedence.
    Extra,
}

/// One directory searched for skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRoot {
    pub source: SkillSource,
    pub dir: PathBuf,
}

/// Everything needed to find an agent's skill roots. The home directory is passed in (never
/// read from the environment) so tests never see the real `~/.agents/skills`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDirs {
    pub workspace: PathBuf,
    pub home_dir: Option<PathBuf>,
    pub pincer_home: PathBuf,
    /// `skills.load.extraDirs`, already expanded.
    pub extra_dirs: Vec<PathBuf>,
    /// Whether the standard roots (workspace, home, `$PINCER_HOME`) are searched; pi's
    /// `--no-skills` turns it off, leaving only `extra_dirs`.
    pub discover: bool,
}

impl SkillDirs {
    /// The roots for an agent: its workspace, the user's home (if known), `$PINCER_HOME` and
    /// `skills.load.extraDirs` (a leading `~` expands against `home_dir`, relative paths are
    /// taken relative to `pincer_home`).
    pub fn new(
        workspace: &Path,
        home_dir: Option<&Path>,
        pincer_home: &Path,
        skills: &SkillsConfig,
    ) -> Self {
        let extra_dirs = skills
            .load
            .extra_dirs
            .iter()
            .map(|dir| dir.trim())
            .filter(|dir| !dir.is_empty())
            .map(|dir| expand_user_path(dir, pincer_home, home_dir))
            .collect();
        Self {
            workspace: workspace.to_path_buf(),
            home_dir: home_dir.map(Path::to_path_buf),
            pincer_home: pincer_home.to_path_buf(),
            extra_dirs,
            discover: true,
        }
    }

    /// Only `extra` (already expanded), no discovery: pi's `--no-skills` with its
    /// `--skill` paths.
    pub fn only(mut self, extra: Vec<PathBuf>) -> Self {
        self.extra_dirs = extra;
        self.discover = false;
        self
    }

    /// The roots in precedence order, highest first.
    pub fn roots(&self) -> Vec<SkillRoot> {
        let extra = self.extra_dirs.iter().map(|dir| SkillRoot {
            source: SkillSource::Extra,
            dir: dir.clone(),
        });
        if !self.discover {
            return extra.collect();
        }
        let mut roots = vec![
            SkillRoot {
                source: SkillSource::Workspace,
                dir: self.workspace.join("skills"),
            },
            SkillRoot {
                source: SkillSource::WorkspaceAgents,
                dir: self.workspace.join(".agents").join("skills"),
            },
        ];
        if let Some(home) = &self.home_dir {
            roots.push(SkillRoot {
                source: SkillSource::PersonalAgents,
                dir: home.join(".agents").join("skills"),
            });
        }
        roots.push(SkillRoot {
            source: SkillSource::Managed,
            dir: self.pincer_home.join("skills"),
        });
        roots.extend(extra);
        roots
    }
}

/// A loaded skill.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// From the frontmatter's `name`.
    pub name: String,
    /// From the frontmatter's `description`: what the model matches tasks against.
    pub description: String,
    /// The SKILL.md file, which the model reads to use the skill.
    pub location: PathBuf,
    /// The skill's directory (relative paths in SKILL.md resolve against it).
    pub base_dir: PathBuf,
    pub source: SkillSource,
    /// `user-invocable` (default true): exposed as a `/<name>` command.
    pub user_invocable: bool,
    /// `disable-model-invocation` (default false): kept out of the model's skill list.
    pub disable_model_invocation: bool,
    /// `metadata`, a JSON (or JSON5) object, e.g. `{"openclaw":{"requires":{…}}}`.
    pub metadata: Option<serde_json::Value>,
}

/// What is wrong with a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillProblem {
    /// The file or root directory could not be read.
    Unreadable {
        error: String,
    },
    TooLarge {
        bytes: u64,
    },
    Frontmatter(FrontmatterError),
    MissingName,
    MissingDescription,
    /// A boolean key holds something other than `true`/`false`.
    InvalidBoolean {
        key: String,
        value: String,
    },
    /// `metadata` is not a JSON/JSON5 object. The skill still loads, without metadata.
    InvalidMetadata {
        error: String,
    },
    /// A skill of the same name in a higher-precedence root hides this one.
    Shadowed {
        by: PathBuf,
    },
}

/// A problem with one skill file (or root directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillIssue {
    pub path: PathBuf,
    pub problem: SkillProblem,
}

impl SkillIssue {
    /// Whether the skill was left out because of this issue (all but bad metadata).
    pub fn skill_skipped(&self) -> bool {
        !matches!(self.problem, SkillProblem::InvalidMetadata { .. })
    }
}

impl fmt::Display for SkillIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.problem {
            SkillProblem::Unreadable { error } => write!(f, "{path}: cannot read: {error}"),
            SkillProblem::TooLarge { bytes } => write!(
                f,
                "{path}: {bytes} bytes is over the {MAX_SKILL_FILE_BYTES}-byte limit"
            ),
            SkillProblem::Frontmatter(FrontmatterError::Missing) => {
                write!(f, "{path}: no frontmatter (the file must start with `---`)")
            }
            SkillProblem::Frontmatter(FrontmatterError::Unterminated) => {
                write!(f, "{path}: the frontmatter has no closing `---`")
            }
            SkillProblem::Frontmatter(FrontmatterError::Unsupported { line, reason }) => {
                write!(f, "{path}:{line}: {reason}")
            }
            SkillProblem::MissingName => write!(f, "{path}: the frontmatter has no `name`"),
            SkillProblem::MissingDescription => {
                write!(f, "{path}: the frontmatter has no `description`")
            }
            SkillProblem::InvalidBoolean { key, value } => {
                write!(f, "{path}: `{key}` must be true or false, not {value:?}")
            }
            SkillProblem::InvalidMetadata { error } => {
                write!(f, "{path}: `metadata` ignored, not a JSON object: {error}")
            }
            SkillProblem::Shadowed { by } => {
                write!(
                    f,
                    "{path}: hidden by the skill of the same name at {}",
                    by.display()
                )
            }
        }
    }
}

/// The outcome of a load: the skills in precedence order, and what was wrong.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkillSet {
    pub skills: Vec<Skill>,
    pub issues: Vec<SkillIssue>,
}

impl SkillSet {
    /// The skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// The skills the model may pick by itself (not `disable-model-invocation`).
    pub fn model_visible(&self) -> Vec<Skill> {
        self.skills
            .iter()
            .filter(|skill| !skill.disable_model_invocation)
            .cloned()
            .collect()
    }
}

/// Loads the skills of every root in `dirs`.
#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: Runtime::plan (on the pool) and the CLI's one-shot commands"
)]
pub fn load_skills(dirs: &SkillDirs) -> SkillSet {
    load_skills_from_roots(&dirs.roots())
}

/// Loads skills from `roots`, highest precedence first. Within a root, skill directories are
/// read in name order so the result never depends on the filesystem's listing order. Hidden
/// directories and `node_modules` are not searched; a missing root is simply empty.
pub fn load_skills_from_roots(roots: &[SkillRoot]) -> SkillSet {
    let mut set = SkillSet::default();
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    for root in roots {
        for skill_file in skill_files_in(root, &mut set.issues) {
            let Some(skill) = load_skill_file(&skill_file, root.source, &mut set.issues) else {
                continue;
            };
            if let Some(winner) = seen.get(&skill.name) {
                set.issues.push(SkillIssue {
                    path: skill.location,
                    problem: SkillProblem::Shadowed { by: winner.clone() },
                });
                continue;
            }
            seen.insert(skill.name.clone(), skill.location.clone());
            set.skills.push(skill);
        }
    }
    set
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: load_skills, called by Runtime::plan (on the pool) and the CLI's one-shot commands"
)]
fn skill_files_in(root: &SkillRoot, issues: &mut Vec<SkillIssue>) -> Vec<PathBuf> {
    // An extra root may be one skill: its directory or its SKILL.md (pi's `--skill`).
    if root.source == SkillSource::Extra {
        let is_file = |p: &Path| fs::metadata(p).is_ok_and(|meta| meta.is_file());
        if root.dir.file_name().is_some_and(|n| n == SKILL_FILE) && is_file(&root.dir) {
            return vec![root.dir.clone()];
        }
        let own = root.dir.join(SKILL_FILE);
        if is_file(&own) {
            return vec![own];
        }
    }
    let entries = match fs::read_dir(&root.dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(err) => {
            issues.push(SkillIssue {
                path: root.dir.clone(),
                problem: SkillProblem::Unreadable {
                    error: err.to_string(),
                },
            });
            return Vec::new();
        }
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name != "node_modules"
        })
        .map(|entry| entry.path())
        // `metadata` follows symlinks, so a linked skill directory counts.
        .filter(|path| fs::metadata(path).is_ok_and(|meta| meta.is_dir()))
        .collect();
    dirs.sort();
    dirs.into_iter()
        .map(|dir| dir.join(SKILL_FILE))
        .filter(|file| fs::symlink_metadata(file).is_ok())
        .collect()
}

#[expect(
    clippy::disallowed_methods,
    reason = "runs on the blocking pool: load_skills, called by Runtime::plan (on the pool) and the CLI's one-shot commands"
)]
fn load_skill_file(
    path: &Path,
    source: SkillSource,
    issues: &mut Vec<SkillIssue>,
) -> Option<Skill> {
    let mut report = |problem| {
        issues.push(SkillIssue {
            path: path.to_path_buf(),
            problem,
        })
    };
    let unreadable = |err: io::Error| SkillProblem::Unreadable {
        error: err.to_string(),
    };
    let size = match fs::metadata(path) {
        Ok(meta) => meta.len(),
        Err(err) => {
            report(unreadable(err));
            return None;
        }
    };
    if size > MAX_SKILL_FILE_BYTES {
        report(SkillProblem::TooLarge { bytes: size });
        return None;
    }
    let content = match fs::read(path).map(String::from_utf8) {
        Ok(Ok(content)) => content,
        Ok(Err(_)) => {
            report(SkillProblem::Unreadable {
                error: "not UTF-8 text".to_string(),
            });
            return None;
        }
        Err(err) => {
            report(unreadable(err));
            return None;
        }
    };
    let parsed = match parse_skill(&content) {
        Ok(parsed) => parsed,
        Err(problem) => {
            report(problem);
            return None;
        }
    };
    if let Some(problem) = parsed.metadata_problem {
        report(problem);
    }
    Some(Skill {
        name: parsed.name,
        description: parsed.description,
        location: path.to_path_buf(),
        base_dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        source,
        user_invocable: parsed.user_invocable,
        disable_model_invocation: parsed.disable_model_invocation,
        metadata: parsed.metadata,
    })
}

/// A SKILL.md's frontmatter, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSkill {
    pub name: String,
    pub description: String,
    pub user_invocable: bool,
    pub disable_model_invocation: bool,
    pub metadata: Option<serde_json::Value>,
    /// Set when `metadata` was present but unusable (the skill is still valid).
    pub metadata_problem: Option<SkillProblem>,
}

/// Reads and checks a SKILL.md's frontmatter: `name` and `description` are required
/// (non-blank); `user-invocable` and `disable-model-invocation` must be booleans if given;
/// `metadata` is parsed as JSON5 (so JSON, and OpenClaw's trailing-comma block form, work).
/// Other keys (`license`, `allowed-tools`, `homepage`, …) are ignored.
pub fn parse_skill(content: &str) -> Result<ParsedSkill, SkillProblem> {
    let fields = parse_frontmatter(content).map_err(SkillProblem::Frontmatter)?;
    let text = |key: &str| {
        fields
            .get(key)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let name = text("name").ok_or(SkillProblem::MissingName)?;
    let description = text("description").ok_or(SkillProblem::MissingDescription)?;
    let boolean = |key: &str, default: bool| match fields.get(key).map(|v| v.trim()) {
        None => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(SkillProblem::InvalidBoolean {
            key: key.to_string(),
            value: v.to_string(),
        }),
    };
    let user_invocable = boolean("user-invocable", true)?;
    let disable_model_invocation = boolean("disable-model-invocation", false)?;
    let (metadata, metadata_problem) = match text("metadata") {
        None => (None, None),
        Some(raw) => match json5::from_str::<serde_json::Value>(&raw) {
            Ok(value @ serde_json::Value::Object(_)) => (Some(value), None),
            Ok(_) => (
                None,
                Some(SkillProblem::InvalidMetadata {
                    error: "expected an object".to_string(),
                }),
            ),
            Err(err) => (
                None,
                Some(SkillProblem::InvalidMetadata {
                    error: err.to_string(),
                }),
            ),
        },
    };
    Ok(ParsedSkill {
        name,
        description,
        user_invocable,
        disable_model_invocation,
        metadata,
        metadata_problem,
    })
}

/// The skills block of the system prompt, as OpenClaw injects it (pi-coding-agent's
/// `formatSkillsForPrompt`): a short instruction, then `<available_skills>` with each
/// skill's name, description and SKILL.md location, XML-escaped. Skills with
/// `disable-model-invocation` are left out; with none left the block is empty. A
/// description's line breaks become spaces so each field stays on one line.
pub fn format_skills_for_prompt(skills: &[Skill], read_tool: &str) -> String {
    let listed: Vec<&Skill> = skills
        .iter()
        .filter(|skill| !skill.disable_model_invocation)
        .collect();
    if listed.is_empty() {
        return String::new();
    }
    let mut lines = vec![
        "The following skills provide specialized instructions for specific tasks.".to_string(),
        format!(
            "Use the {read_tool} tool to load a skill's file when the task matches its description."
        ),
        "When a skill file references a relative path, resolve it against the skill directory \
         (parent of SKILL.md / dirname of the path) and use that absolute path in tool commands."
            .to_string(),
        String::new(),
        "<available_skills>".to_string(),
    ];
    for skill in listed {
        let description = skill
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        lines.push("  <skill>".to_string());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!(
            "    <description>{}</description>",
            escape_xml(&description)
        ));
        lines.push(format!(
            "    <location>{}</location>",
            escape_xml(&skill.location.to_string_lossy())
        ));
        lines.push("  </skill>".to_string());
    }
    lines.push("</available_skills>".to_string());
    lines.join("\n")
}

fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}
