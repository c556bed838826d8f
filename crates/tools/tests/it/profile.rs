//! Tool profiles and allow/deny filters: what each profile includes, allow adding beyond
//! the profile, deny winning, globs, serde names, and `apply` on real tools.

#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use pincer_tools::PathPolicy;
use pincer_tools::basic::basic_tools;
use pincer_tools::files::file_tools;
use pincer_tools::profile::{ToolFilter, ToolProfile};
use serde_json::json;

fn filter(profile: ToolProfile, allow: &[&str], deny: &[&str]) -> ToolFilter {
    ToolFilter {
        profile,
        allow: allow.iter().map(|s| (*s).to_owned()).collect(),
        deny: deny.iter().map(|s| (*s).to_owned()).collect(),
    }
}

#[test]
fn profiles_name_their_tools() {
    let full = ToolFilter::profile(ToolProfile::Full);
    assert!(full.permits("read") && full.permits("some_mcp_tool"));
    let coding = ToolFilter::profile(ToolProfile::Coding);
    // The file tools, exec and its sessions, memory, and the basics.
    let files = ["read", "write", "edit", "ls", "grep", "find"];
    let exec_and_memory = ["exec", "process", "memory_search", "memory_get"];
    for name in files.into_iter().chain(exec_and_memory).chain(["time.now"]) {
        assert!(coding.permits(name), "{name}");
    }
    assert!(coding.permits("web_search") && coding.permits("web_fetch"));
    assert!(!coding.permits("send_message") && !coding.permits("browser"));
    let messaging = ToolFilter::profile(ToolProfile::Messaging);
    assert!(messaging.permits("read") && messaging.permits("ls"));
    assert!(messaging.permits("fs.read_file") && messaging.permits("shell.pwd"));
    assert!(messaging.permits("memory_search") && messaging.permits("memory_get"));
    assert!(messaging.permits("web_search") && messaging.permits("web_fetch"));
    assert!(!messaging.permits("write") && !messaging.permits("exec"));
    assert!(!messaging.permits("browser") && full.permits("browser"));
    let minimal = ToolFilter::profile(ToolProfile::Minimal);
    assert!(minimal.permits("time.now") && minimal.permits("tools.echo"));
    assert!(!minimal.permits("shell.pwd") && !minimal.permits("read"));
    assert_eq!(
        ToolProfile::Minimal.tool_names(),
        Some(&["time.now", "tools.echo"][..])
    );
    assert_eq!(ToolProfile::Full.tool_names(), None);
}

#[test]
fn allow_adds_deny_wins_and_globs_match() {
    let f = filter(ToolProfile::Minimal, &["read", "fs.*"], &["fs.read_file"]);
    assert!(f.permits("read"));
    assert!(f.permits("fs.list_dir"));
    assert!(!f.permits("fs.read_file"), "deny beats allow");
    assert!(!f.permits("write"));

    let f = filter(ToolProfile::Full, &[], &["exec", "process", "fs.*"]);
    assert!(!f.permits("exec") && !f.permits("fs.list_dir"));
    assert!(f.permits("read"));

    let f = filter(ToolProfile::Coding, &["*"], &["time.now"]);
    assert!(f.permits("anything"));
    assert!(!f.permits("time.now"), "deny beats the profile");

    // A malformed glob is taken as an exact name.
    let f = filter(ToolProfile::Minimal, &["odd[name"], &[]);
    assert!(f.permits("odd[name"));
    assert!(!f.permits("oddn"));
}

#[test]
fn serde_uses_lowercase_names_and_defaults() {
    let f: ToolFilter =
        serde_json::from_value(json!({"profile": "messaging", "deny": ["ls"]})).unwrap();
    assert_eq!(f, filter(ToolProfile::Messaging, &[], &["ls"]));
    let f: ToolFilter = serde_json::from_value(json!({})).unwrap();
    assert_eq!(f.profile, ToolProfile::Full);
    assert_eq!(
        serde_json::to_value(ToolProfile::Coding).unwrap(),
        json!("coding")
    );
    assert!(serde_json::from_value::<ToolProfile>(json!("Coding")).is_err());
}

#[test]
fn apply_keeps_permitted_tools_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let policy = PathPolicy::workspace(dir.path()).unwrap();
    let mut tools = file_tools(policy.clone());
    tools.extend(basic_tools(policy));
    let names = |f: &ToolFilter| -> Vec<String> {
        f.apply(tools.clone())
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    };
    assert_eq!(
        names(&filter(ToolProfile::Messaging, &["grep"], &["fs.*"])),
        ["read", "ls", "grep", "time.now", "tools.echo", "shell.pwd"]
    );
    assert_eq!(
        names(&ToolFilter::profile(ToolProfile::Minimal)),
        ["time.now", "tools.echo"]
    );
    assert_eq!(names(&ToolFilter::profile(ToolProfile::Full)).len(), 11);
    assert_eq!(names(&ToolFilter::profile(ToolProfile::Coding)).len(), 11);
}
