//! Workspaces through the public API: creating one without touching a user's files,
//! where it lives, and which files (cut how) go into a session's prompt.

use std::fs;
use std::path::{Path, PathBuf};

use pincer_config::{AgentEntry, PincerConfig};
use pincer_testkit::files::{sorted_names, strings};
use pincer_turns::router::SessionKind;
use pincer_turns::workspace::{
    BootstrapFile, BootstrapLimits, EnsureReport, STARTER_FILES, WorkspaceError,
    default_workspace_dir, ensure_workspace, load_bootstrap_files, resolve_workspace_dir,
};

const ALL_STARTERS: [&str; 9] = [
    "AGENTS.md",
    "SOUL.md",
    "TOOLS.md",
    "IDENTITY.md",
    "USER.md",
    "HEARTBEAT.md",
    "MEMORY.md",
    "memory/",
    "skills/",
];

#[test]
fn a_new_workspace_gets_every_starter_file_and_directory() {
    let home = tempfile::tempdir().unwrap();
    let dir = default_workspace_dir(home.path(), "Main");
    assert_eq!(dir, home.path().join("agents/main/workspace"));

    let report = ensure_workspace(&dir).unwrap();
    assert_eq!(
        report,
        EnsureReport {
            dir: dir.clone(),
            created_dir: true,
            created: strings(&ALL_STARTERS),
            kept: vec![],
        }
    );
    for (name, content) in STARTER_FILES {
        assert_eq!(
            fs::read_to_string(dir.join(name)).unwrap(),
            content,
            "{name}"
        );
    }
    // No temporary files are left behind.
    assert_eq!(
        sorted_names(&dir),
        [
            "AGENTS.md",
            "HEARTBEAT.md",
            "IDENTITY.md",
            "MEMORY.md",
            "SOUL.md",
            "TOOLS.md",
            "USER.md",
            "memory",
            "skills"
        ]
    );

    let again = ensure_workspace(&dir).unwrap();
    assert_eq!(
        again,
        EnsureReport {
            dir,
            created_dir: false,
            created: vec![],
            kept: strings(&ALL_STARTERS),
        }
    );
}

#[test]
fn ensure_never_overwrites_a_users_files() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("ws");
    fs::create_dir_all(dir.join("skills")).unwrap();
    fs::write(dir.join("AGENTS.md"), "my rules").unwrap();
    fs::write(dir.join("HEARTBEAT.md"), "").unwrap();

    let report = ensure_workspace(&dir).unwrap();
    assert_eq!(
        report.created,
        strings(&[
            "SOUL.md",
            "TOOLS.md",
            "IDENTITY.md",
            "USER.md",
            "MEMORY.md",
            "memory/"
        ])
    );
    assert_eq!(
        report.kept,
        strings(&["AGENTS.md", "HEARTBEAT.md", "skills/"])
    );
    assert!(!report.created_dir);
    assert_eq!(
        fs::read_to_string(dir.join("AGENTS.md")).unwrap(),
        "my rules"
    );
    // An emptied file is the user's choice too.
    assert_eq!(fs::read_to_string(dir.join("HEARTBEAT.md")).unwrap(), "");
}

#[test]
fn ensure_refuses_a_file_where_the_workspace_should_be() {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("ws");
    fs::write(&path, "not a dir").unwrap();
    match ensure_workspace(&path) {
        Err(WorkspaceError::NotADirectory { path: p }) => assert_eq!(p, path),
        other => panic!("expected NotADirectory, got {other:?}"),
    }
}

#[test]
fn the_heartbeat_starter_is_effectively_empty() {
    // An effectively empty HEARTBEAT.md (headings and blank lines only) skips heartbeat ticks.
    let (_, content) = STARTER_FILES
        .iter()
        .find(|(name, _)| *name == "HEARTBEAT.md")
        .unwrap();
    assert!(content.contains("skip heartbeat ticks"));
    for line in content.lines() {
        let line = line.trim();
        assert!(line.is_empty() || line.starts_with("# "), "{line:?}");
    }
}

#[test]
fn workspace_dirs_resolve_from_config_home_and_pincer_home() {
    let pincer_home = Path::new("/srv/pincer");
    let home = Path::new("/home/ann");
    let mut cfg = PincerConfig::default();
    cfg.agents.list = [
        ("abs", "/data/abs"),
        ("tilde", "~/agents/tilde"),
        ("rel", "spaces/rel"),
        ("blank", "  "),
    ]
    .map(|(id, workspace)| AgentEntry {
        id: id.into(),
        workspace: Some(workspace.into()),
        ..AgentEntry::default()
    })
    .into();
    let cases = [
        ("main", Some(home), "/srv/pincer/agents/main/workspace"),
        ("abs", Some(home), "/data/abs"),
        ("Tilde", Some(home), "/home/ann/agents/tilde"),
        ("tilde", None, "/srv/pincer/~/agents/tilde"),
        ("rel", Some(home), "/srv/pincer/spaces/rel"),
        ("blank", Some(home), "/srv/pincer/agents/blank/workspace"),
    ];
    for (agent, home_dir, expected) in cases {
        assert_eq!(
            resolve_workspace_dir(&cfg, agent, pincer_home, home_dir),
            PathBuf::from(expected),
            "{agent}"
        );
    }
}

fn seed(dir: &Path, files: &[(&str, &str)]) {
    fs::create_dir_all(dir).unwrap();
    for (name, content) in files {
        fs::write(dir.join(name), content).unwrap();
    }
}

/// A new temporary workspace holding `files`.
fn seeded(files: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    seed(root.path(), files);
    root
}

/// What the loader makes of a file cut to `head` and `tail` (OpenClaw's marker), `kept`
/// reading `head+tail` in characters, `of` the file's own length.
fn marked(name: &str, head: &str, tail: &str, kept: &str, of: usize) -> String {
    format!(
        "{head}\n\n[...truncated, read {name} for full content...]\n\
         …(truncated {name}: kept {kept} chars of {of})…\n\n{tail}"
    )
}

/// Limits of `per_file` characters a file and `total` for all of them.
fn limits_of(per_file: usize, total: usize) -> BootstrapLimits {
    BootstrapLimits {
        max_chars_per_file: per_file,
        max_total_chars: total,
    }
}

fn names(files: &[BootstrapFile]) -> Vec<&str> {
    files.iter().map(|f| f.name.as_str()).collect()
}

#[test]
fn each_session_kind_gets_its_files_in_openclaw_order() {
    // Written out of order on purpose: the order comes from the loader.
    let root = seeded(&[
        ("MEMORY.md", "memory"),
        ("USER.md", "user"),
        ("BOOTSTRAP.md", "bootstrap"),
        ("HEARTBEAT.md", "heartbeat"),
        ("IDENTITY.md", "identity"),
        ("TOOLS.md", "tools"),
        ("SOUL.md", "soul"),
        ("AGENTS.md", "agents"),
        ("NOTES.md", "not injected"),
    ]);
    let dir = root.path();
    // The six starter files in their order, then BOOTSTRAP.md, and MEMORY.md last.
    let everything: Vec<&str> = ALL_STARTERS[..6]
        .iter()
        .copied()
        .chain(["BOOTSTRAP.md", "MEMORY.md"])
        .collect();
    let cases: [(SessionKind, &[&str]); 5] = [
        (SessionKind::Main, &everything),
        (SessionKind::Direct, &everything),
        (SessionKind::Group, &everything[..7]),
        (SessionKind::Cron, &["AGENTS.md", "TOOLS.md"]),
        (SessionKind::Subagent, &["AGENTS.md", "TOOLS.md"]),
    ];
    for (kind, expected) in cases {
        let files = load_bootstrap_files(dir, kind, &BootstrapLimits::default()).unwrap();
        assert_eq!(names(&files), expected, "{kind:?}");
    }
}

#[test]
fn missing_and_empty_files_are_skipped_and_trailing_space_trimmed() {
    let root = seeded(&[
        ("AGENTS.md", "  rules\n\n\n"),
        ("SOUL.md", ""),
        ("TOOLS.md", " \n\t\n"),
        ("memory.md", "lowercase memory  \n"),
    ]);
    let dir = root.path();
    let files = load_bootstrap_files(dir, SessionKind::Main, &BootstrapLimits::default()).unwrap();
    assert_eq!(
        files,
        vec![
            BootstrapFile {
                name: "AGENTS.md".into(),
                content: "  rules".into(),
                truncated: false,
                original_chars: 7,
            },
            BootstrapFile {
                name: "memory.md".into(),
                content: "lowercase memory".into(),
                truncated: false,
                original_chars: 16,
            },
        ]
    );
    let empty = tempfile::tempdir().unwrap();
    assert_eq!(
        load_bootstrap_files(empty.path(), SessionKind::Main, &BootstrapLimits::default()).unwrap(),
        vec![]
    );
    // A directory that does not exist has no files either.
    assert_eq!(
        load_bootstrap_files(
            &empty.path().join("nope"),
            SessionKind::Main,
            &BootstrapLimits::default()
        )
        .unwrap(),
        vec![]
    );
}

/// `n` characters cycling through the digits, so head and tail are recognisable.
fn digits(n: usize) -> String {
    (0..n).map(|i| char::from(b'0' + (i % 10) as u8)).collect()
}

#[test]
fn a_long_file_keeps_head_and_tail_around_openclaws_marker() {
    let body = digits(250);
    let root = seeded(&[("AGENTS.md", &format!("{body}\n"))]);
    let dir = root.path();
    let limits = limits_of(100, 10_000);
    let files = load_bootstrap_files(dir, SessionKind::Cron, &limits).unwrap();
    let expected = marked("AGENTS.md", &body[..70], &body[230..], "70+20", 250);
    assert_eq!(
        files,
        vec![BootstrapFile {
            name: "AGENTS.md".into(),
            content: expected,
            truncated: true,
            original_chars: 250,
        }]
    );
}

#[test]
fn limits_count_characters_not_bytes() {
    let root = seeded(&[("TOOLS.md", &"é".repeat(100))]);
    let dir = root.path();
    let exact = limits_of(100, 1000);
    let files = load_bootstrap_files(dir, SessionKind::Cron, &exact).unwrap();
    assert_eq!(files[0].content, "é".repeat(100));
    assert!(!files[0].truncated);

    seed(dir, &[("TOOLS.md", &"é".repeat(101))]);
    let files = load_bootstrap_files(dir, SessionKind::Cron, &exact).unwrap();
    assert_eq!(
        files[0].content,
        marked("TOOLS.md", &"é".repeat(70), &"é".repeat(20), "70+20", 101)
    );
}

#[test]
fn the_total_budget_cuts_the_last_file_and_stops_below_64_chars() {
    let second = digits(100);
    let root = seeded(&[
        ("AGENTS.md", &"a".repeat(100)),
        ("SOUL.md", &second),
        ("TOOLS.md", "never reached"),
    ]);
    let dir = root.path();
    // 100 for AGENTS.md leaves 64: SOUL.md is cut to that budget (its per-file limit becomes
    // 64, and the marked version, still too long, is clamped to 63 chars plus `…`); nothing
    // is left for TOOLS.md.
    let limits = limits_of(1000, 164);
    let files = load_bootstrap_files(dir, SessionKind::Group, &limits).unwrap();
    let cut = marked("SOUL.md", &second[..44], &second[88..], "44+12", 100);
    let clamped: String = cut.chars().take(63).chain(['…']).collect();
    assert_eq!(names(&files), ["AGENTS.md", "SOUL.md"]);
    assert_eq!(files[1].content, clamped);
    assert_eq!(files[1].content.chars().count(), 64);
    assert!(files[1].truncated);
    assert_eq!(files[1].original_chars, 100);

    // With 63 left after the first file, no further file is started at all.
    let limits = limits_of(1000, 163);
    let files = load_bootstrap_files(dir, SessionKind::Group, &limits).unwrap();
    assert_eq!(names(&files), ["AGENTS.md"]);
}

#[test]
fn an_unreadable_file_is_an_error_not_a_silent_gap() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path();
    fs::create_dir_all(dir.join("SOUL.md")).unwrap();
    match load_bootstrap_files(dir, SessionKind::Main, &BootstrapLimits::default()) {
        Err(WorkspaceError::ReadFile { path, .. }) => assert_eq!(path, dir.join("SOUL.md")),
        other => panic!("expected ReadFile, got {other:?}"),
    }
}

#[test]
fn limits_come_from_agent_defaults() {
    let mut cfg = PincerConfig::default();
    assert_eq!(
        BootstrapLimits::from_config(&cfg),
        limits_of(20_000, 150_000)
    );
    cfg.agents.defaults.bootstrap_max_chars = Some(500);
    cfg.agents.defaults.bootstrap_total_max_chars = Some(0);
    assert_eq!(BootstrapLimits::from_config(&cfg), limits_of(500, 150_000));
}

/// Finding 8 of the security review: a new workspace (and the directories above it that
/// Pincer creates) is the owner's alone: `MEMORY.md` and every starter file 0600, every
/// directory 0700.
#[cfg(unix)]
#[test]
fn a_new_workspace_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let dir = default_workspace_dir(home.path(), "main");
    ensure_workspace(&dir).unwrap();
    let mut modes: Vec<(String, u32)> = Vec::new();
    let mut stack = vec![home.path().join("agents")];
    while let Some(path) = stack.pop() {
        let meta = fs::metadata(&path).unwrap();
        let rel = path
            .strip_prefix(home.path())
            .unwrap()
            .display()
            .to_string();
        modes.push((rel, meta.permissions().mode() & 0o777));
        if meta.is_dir() {
            stack.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
    }
    modes.sort();
    let want = |rel: &str| if rel.ends_with(".md") { 0o600 } else { 0o700 };
    let wrong: Vec<_> = modes
        .iter()
        .filter(|(rel, mode)| *mode != want(rel))
        .collect();
    assert!(wrong.is_empty(), "not private: {wrong:?}");
    assert!(modes.contains(&("agents/main/workspace/MEMORY.md".to_owned(), 0o600)));
}
