//! get / set / unset on the raw document, CLI values, key paths, and saving: checked first,
//! then atomic and 0600; an invalid document is refused and the file left alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_ai::env::MapEnv;
use pincer_config::*;
use serde_json::json;

fn path(text: &str) -> KeyPath {
    KeyPath::parse(text).unwrap()
}

#[test]
fn key_paths_parse_and_print_back() {
    for text in [
        "agents.defaults.model",
        "agents.list[0].id",
        "bindings[0].match.channel",
        "session.identityLinks[\"a.b\"][2]",
        "$schema",
        "models.providers.my-local.apiKey",
    ] {
        assert_eq!(path(text).to_string(), text);
    }
    assert_eq!(
        path("a[\"x\\\"y\"]").segments(),
        &[
            PathSegment::Key("a".into()),
            PathSegment::Key("x\"y".into())
        ]
    );
    for (bad, reason) in [
        ("", "the path is empty"),
        ("a..b", "expected a key name"),
        ("a.", "expected a key name"),
        ("a[x]", "an index must be a number, like [0]"),
        ("a[1", "expected `]`"),
        ("a[0]b", "expected `.` or `[` after a key"),
        ("a.[0]", "expected a key name"),
        ("a[\"x]", "unterminated quoted key"),
    ] {
        assert_eq!(
            KeyPath::parse(bad).unwrap_err().to_string(),
            format!("key path `{bad}`: {reason}")
        );
    }
}

#[test]
fn get_set_unset_round_trip() {
    let mut raw = json!({"agents": {"list": [{"id": "a"}]}});
    set(
        &mut raw,
        &path("agents.defaults.model"),
        json!("anthropic/claude"),
    )
    .unwrap();
    set(&mut raw, &path("agents.list[0].name"), json!("Alpha")).unwrap();
    set(&mut raw, &path("agents.list[1]"), json!({"id": "b"})).unwrap();
    set(
        &mut raw,
        &path("bindings[0].match.channel"),
        json!("telegram"),
    )
    .unwrap();
    set(
        &mut raw,
        &path("session.identityLinks[\"a.b\"]"),
        json!(["x:1"]),
    )
    .unwrap();
    assert_eq!(
        raw,
        json!({
            "agents": {
                "defaults": {"model": "anthropic/claude"},
                "list": [{"id": "a", "name": "Alpha"}, {"id": "b"}],
            },
            "bindings": [{"match": {"channel": "telegram"}}],
            "session": {"identityLinks": {"a.b": ["x:1"]}},
        })
    );
    assert_eq!(get(&raw, &path("agents.list[1].id")), Some(&json!("b")));
    assert_eq!(get(&raw, &path("agents.list[2].id")), None);
    assert_eq!(get(&raw, &path("agents.defaults.model.primary")), None);

    assert_eq!(
        unset(&mut raw, &path("agents.list[0]")),
        Some(json!({"id": "a", "name": "Alpha"}))
    );
    assert_eq!(
        get(&raw, &path("agents.list[0].id")),
        Some(&json!("b")),
        "later elements shift"
    );
    assert_eq!(
        unset(&mut raw, &path("bindings")),
        Some(json!([{"match": {"channel": "telegram"}}]))
    );
    assert_eq!(unset(&mut raw, &path("bindings")), None);
    assert_eq!(
        unset(&mut raw, &path("agents.defaults.model.primary")),
        None
    );
    assert_eq!(unset(&mut raw, &path("agents.list[9]")), None);
}

#[test]
fn set_refuses_to_go_through_values_that_are_not_containers() {
    let mut raw = json!({"agents": {"defaults": {"model": "a/b"}, "list": []}, "x": null});
    assert_eq!(
        set(
            &mut raw,
            &path("agents.defaults.model.primary"),
            json!("c/d")
        )
        .unwrap_err()
        .to_string(),
        "key path `agents.defaults.model.primary`: `agents.defaults.model` is a string, not an object"
    );
    assert_eq!(
        set(&mut raw, &path("agents.list[1]"), json!({}))
            .unwrap_err()
            .to_string(),
        "key path `agents.list[1]`: index 1 is past the end of `agents.list` (0 elements)"
    );
    assert_eq!(
        set(&mut raw, &path("agents[0]"), json!(1))
            .unwrap_err()
            .to_string(),
        "key path `agents[0]`: `agents` is an object, not an array"
    );
    // `null` counts as unset.
    set(&mut raw, &path("x.y"), json!(1)).unwrap();
    assert_eq!(get(&raw, &path("x")), Some(&json!({"y": 1})));
    assert_eq!(
        set(&mut raw, &KeyPath::root(), json!({}))
            .unwrap_err()
            .to_string(),
        "key path ``: cannot replace the whole document"
    );
}

#[test]
fn cli_values_are_json5_when_they_parse_and_strings_otherwise() {
    assert_eq!(parse_cli_value("42"), json!(42));
    assert_eq!(parse_cli_value("-1.5"), json!(-1.5));
    assert_eq!(parse_cli_value("true"), json!(true));
    assert_eq!(parse_cli_value("null"), json!(null));
    assert_eq!(parse_cli_value("['a', 2]"), json!(["a", 2]));
    assert_eq!(
        parse_cli_value("{primary: 'a/b'}"),
        json!({"primary": "a/b"})
    );
    assert_eq!(parse_cli_value("\"quoted\""), json!("quoted"));
    assert_eq!(
        parse_cli_value("anthropic/claude-sonnet-4-5"),
        json!("anthropic/claude-sonnet-4-5")
    );
    assert_eq!(
        parse_cli_value("${OPENAI_API_KEY}"),
        json!("${OPENAI_API_KEY}")
    );
    assert_eq!(parse_cli_value("per-peer"), json!("per-peer"));
    assert_eq!(parse_cli_value(""), json!(""));
    assert_eq!(parse_cli_value("{broken"), json!("{broken"));
}

#[test]
fn save_writes_pretty_json_with_mode_0600_and_loads_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("home/pincer.json5");
    let env = MapEnv::new([("KEY", "sk-1")]);
    let mut raw = json!({});
    set(
        &mut raw,
        &path("agents.defaults.model"),
        parse_cli_value("anthropic/claude"),
    )
    .unwrap();
    set(
        &mut raw,
        &path("models.providers.p.apiKey"),
        parse_cli_value("${KEY}"),
    )
    .unwrap();
    let config = save(&file, &raw, &env).unwrap();
    assert_eq!(
        config.models.providers["p"]
            .api_key
            .as_ref()
            .map(pincer_base::Secret::expose),
        Some("sk-1")
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\n  \"agents\": {\n    \"defaults\": {\n      \"model\": \"anthropic/claude\"\n    }\n  },\n  \"models\": {\n    \"providers\": {\n      \"p\": {\n        \"apiKey\": \"${KEY}\"\n      }\n    }\n  }\n}\n"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let loaded = load(&file, &env).unwrap();
    assert!(loaded.exists);
    assert_eq!(loaded.raw, raw);
    assert_eq!(loaded.config, config);
    let leftovers = std::fs::read_dir(file.parent().unwrap()).unwrap().count();
    assert_eq!(leftovers, 1, "no temp files left behind");
}

#[test]
fn an_invalid_set_is_refused_and_the_file_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pincer.json5");
    let original = "// mine\n{ session: { dmScope: 'per-peer' } }\n";
    std::fs::write(&file, original).unwrap();
    let env = MapEnv::default();
    let origin = file.display().to_string();

    let cases = [
        (
            "session.dmScope",
            "per-nobody",
            "session.dmScope: unknown variant \"per-nobody\", expected one of main, per-peer, per-channel-peer, per-account-channel-peer",
        ),
        (
            "session.dmscope",
            "main",
            "session.dmscope: unknown key, did you mean `dmScope`?",
        ),
        (
            "agents.defaults.model",
            "gpt-5",
            "agents.defaults.model: invalid model reference \"gpt-5\": expected provider/model, like \"anthropic/claude-sonnet-4-5\"",
        ),
        (
            "models.providers.p.apiKey",
            "${NOT_SET}",
            "models.providers.p.apiKey: environment variable NOT_SET is not set or empty (referenced as ${NOT_SET})",
        ),
    ];
    for (key, value, message) in cases {
        let mut raw = read_raw(&file).unwrap().unwrap();
        set(&mut raw, &path(key), parse_cli_value(value)).unwrap();
        assert_eq!(
            save(&file, &raw, &env).unwrap_err().to_string(),
            format!("{origin}: {message}")
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    }
    assert_eq!(
        save(&file, &json!([]), &env).unwrap_err().to_string(),
        format!("{origin}: the config must be an object ({{ … }}), found an array")
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);

    // A valid set goes through (and drops the comment: the file is rewritten as JSON).
    let mut raw = read_raw(&file).unwrap().unwrap();
    set(&mut raw, &path("session.dmScope"), parse_cli_value("main")).unwrap();
    save(&file, &raw, &env).unwrap();
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\n  \"session\": {\n    \"dmScope\": \"main\"\n  }\n}\n"
    );
}

#[test]
fn a_write_failure_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "").unwrap();
    let file = blocker.join("pincer.json5");
    let err = save(&file, &json!({}), &MapEnv::default())
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("cannot write the config: "), "{err}");
    assert!(err.contains("not-a-dir"), "{err}");
}
