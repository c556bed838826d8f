//! Loading: the full config, defaults, strict errors with file/line/column and key path,
//! syntax errors, `${ENV}` substitution and malformed input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use pincer_ai::env::MapEnv;
use pincer_config::*;

fn no_env() -> MapEnv {
    MapEnv::default()
}

/// The error of loading `text` (named `pincer.json5`), as printed.
fn error_of(text: &str) -> String {
    error_with_env(text, &no_env())
}

fn error_with_env(text: &str, env: &MapEnv) -> String {
    parse_str(text, "pincer.json5", env)
        .expect_err("the config should be refused")
        .to_string()
}

const FULL: &str = r#"// Every section of the config.
{
  $schema: "https://example.invalid/pincer.schema.json",
  agents: {
    defaults: {
      model: { primary: "anthropic/claude-sonnet-4-5", fallbacks: ["openai/gpt-5", 'openrouter/meta/llama-4',] },
      thinkingLevel: "medium",
      bootstrapMaxChars: 20000,
      bootstrapTotalMaxChars: 150000,
    },
    list: [
      { id: "main", default: true, name: "Main", workspace: "/w/main" },
      {
        id: "coder",
        model: "openai/gpt-5-codex",
        thinkingLevel: "high",
        tools: { profile: "coding", allow: ["exec"], deny: ["browser*"], exec: { security: "allowlist", allow: ["git", "cargo"] } },
      },
    ],
  },
  bindings: [
    { agentId: "coder", match: { channel: "discord", guildId: "g1", peer: { kind: "channel", id: "c9" } } },
    { agentId: "main", match: { channel: "slack", accountId: "work", teamId: "T1" } },
  ],
  session: {
    scope: "per-sender",
    dmScope: "per-channel-peer",
    mainKey: "home",
    identityLinks: { alice: ["telegram:123", "discord:456"] },
    maintenance: { mode: "enforce", pruneAfter: "30d", maxEntries: 500 },
  },
  models: {
    providers: {
      local: {
        baseUrl: "http://127.0.0.1:11434/v1",
        api: "openai-completions",
        apiKey: "${LOCAL_KEY}",
        headers: { "x-trace": "1" },
        models: [{ id: "qwen3", name: "Qwen 3", contextWindow: 32768, maxTokens: 8192, cost: { input: 0, output: 0 } }],
      },
    },
  },
  auth: { order: { anthropic: ["anthropic:work", "anthropic:default"] }, cooldownsMs: [60000, 300000] },
  tools: { profile: "full", deny: ["gateway"] },
  skills: { load: { extraDirs: ["/opt/skills"] } },
  roles: { default: "worker", channels: { discord: { role: "helper", groups: { g1: "admin" } } } },
}
"#;

#[test]
fn a_full_config_loads_every_section() {
    let env = MapEnv::new([("LOCAL_KEY", "sk-local")]);
    let parsed = parse_str(FULL, "pincer.json5", &env).unwrap();
    let c = &parsed.config;
    let defaults = &c.agents.defaults;
    assert_eq!(
        defaults.model,
        Some(ModelSelection::Chain(ModelChain {
            primary: "anthropic/claude-sonnet-4-5".into(),
            fallbacks: vec!["openai/gpt-5".into(), "openrouter/meta/llama-4".into()],
        }))
    );
    assert_eq!(
        defaults.thinking_level,
        Some(pincer_ai::ThinkingLevel::Medium)
    );
    assert_eq!(defaults.bootstrap_max_chars, Some(20000));
    assert_eq!(defaults.bootstrap_total_max_chars, Some(150000));
    assert_eq!(c.agents.list.len(), 2);
    assert!(c.agents.list[0].default);
    assert_eq!(c.agents.list[0].workspace.as_deref(), Some("/w/main"));
    let coder = &c.agents.list[1];
    assert_eq!(
        coder.model,
        Some(ModelSelection::Primary("openai/gpt-5-codex".into()))
    );
    assert_eq!(
        coder.tools,
        Some(ToolsConfig {
            profile: Some(ToolProfileName::Coding),
            allow: vec!["exec".into()],
            deny: vec!["browser*".into()],
            exec: Some(ExecConfig {
                security: Some(ExecSecurityName::Allowlist),
                allow: vec!["git".into(), "cargo".into()],
                notify_on_exit: None,
                ..ExecConfig::default()
            }),
            media: None,
            web: None,
            ..ToolsConfig::default()
        })
    );
    assert_eq!(
        c.bindings[0].match_.peer,
        Some(PeerMatch {
            kind: PeerKind::Channel,
            id: "c9".into()
        })
    );
    assert_eq!(c.bindings[1].match_.team_id.as_deref(), Some("T1"));
    assert_eq!(c.session.dm_scope, DmScope::PerChannelPeer);
    assert_eq!(c.session.main_key(), "home");
    assert_eq!(
        c.session.identity_links["alice"],
        vec!["telegram:123", "discord:456"]
    );
    assert_eq!(c.session.maintenance.mode, MaintenanceMode::Enforce);
    assert_eq!(c.session.maintenance.prune_after.as_deref(), Some("30d"));
    let local = &c.models.providers["local"];
    assert_eq!(
        local.api_key.as_ref().map(pincer_base::Secret::expose),
        Some("sk-local"),
        "substituted"
    );
    assert_eq!(local.models[0].context_window, Some(32768));
    assert_eq!(c.auth.cooldowns_ms, Some(vec![60000, 300000]));
    assert_eq!(c.tools.deny, vec!["gateway"]);
    assert_eq!(c.skills.load.extra_dirs, vec!["/opt/skills"]);
    assert_eq!(c.roles.channels["discord"].groups["g1"], "admin");
    // The raw document is kept as written, references intact.
    assert_eq!(
        get(
            &parsed.raw,
            &"models.providers.local.apiKey".parse().unwrap()
        ),
        Some(&serde_json::json!("${LOCAL_KEY}"))
    );
}

#[test]
fn empty_and_comment_only_files_are_the_defaults() {
    for text in [
        "",
        "  \n",
        "// nothing yet\n/* still nothing */\n",
        "{}",
        "\u{feff}{}",
    ] {
        let parsed = parse_str(text, "pincer.json5", &no_env()).unwrap();
        assert_eq!(parsed.config, PincerConfig::default(), "{text:?}");
        assert_eq!(parsed.raw, serde_json::json!({}));
    }
}

#[test]
fn a_missing_file_is_the_defaults_and_an_existing_one_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pincer.json5");
    let loaded = load(&path, &no_env()).unwrap();
    assert!(!loaded.exists);
    assert_eq!(loaded.config, PincerConfig::default());
    assert_eq!(loaded.raw, serde_json::json!({}));
    assert_eq!(loaded.path, path);

    std::fs::write(&path, "{ session: { dmScope: 'per-peer' } }").unwrap();
    let loaded = load(&path, &no_env()).unwrap();
    assert!(loaded.exists);
    assert_eq!(loaded.config.session.dm_scope, DmScope::PerPeer);
}

#[test]
fn errors_from_a_file_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pincer.json5");
    std::fs::write(
        &path,
        "{\n  agents: {\n    defaults: {\n      thinkingLevel: \"hihg\",\n    },\n  },\n}\n",
    )
    .unwrap();
    let err = load(&path, &no_env()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}:4:7: agents.defaults.thinkingLevel: unknown variant \"hihg\", expected one of off, minimal, low, medium, high, xhigh",
            path.display()
        )
    );
}

#[test]
fn unknown_keys_are_named_with_their_line_at_every_depth() {
    assert_eq!(
        error_of("{\n  agentss: {},\n}"),
        "pincer.json5:2:3: agentss: unknown key, did you mean `agents`?"
    );
    assert_eq!(
        error_of("{\n  session: {\n    dmscope: 'main',\n  },\n}"),
        "pincer.json5:3:5: session.dmscope: unknown key, did you mean `dmScope`?"
    );
    assert_eq!(
        error_of("{\n  agents: {\n    defaults: {\n      modle: 'a/b',\n    },\n  },\n}"),
        "pincer.json5:4:7: agents.defaults.modle: unknown key, did you mean `model`?"
    );
    assert_eq!(
        error_of("{agents: {list: [\n  {id: 'a'},\n  {id: 'b',\n   /* c */ 'colour': 'red'},\n]}}"),
        "pincer.json5:4:12: agents.list[1].colour: unknown key (known keys: id, default, name, workspace, model, thinkingLevel, tools, heartbeat, gatewayPrompts, memorySearch, subagents, delegation, mcp, sandbox)"
    );
    assert_eq!(
        error_of(
            "{bindings: [{agentId: 'main', match: {channel: 'x',\n peer: {kind: 'direct', id: '1', name: 'n'}}}]}"
        ),
        "pincer.json5:2:34: bindings[0].match.peer.name: unknown key (known keys: kind, id)"
    );
    assert_eq!(
        error_of(
            "{models: {providers: {p: {models: [{id: 'm', cost: {input: 1, output: 2, cacheReed: 0}}]}}}}"
        ),
        "pincer.json5:1:74: models.providers.p.models[0].cost.cacheReed: unknown key, did you mean `cacheRead`?"
    );
}

#[test]
fn wrong_types_and_bad_values_are_named() {
    assert_eq!(
        error_of("{\n  agents: {defaults: {bootstrapMaxChars: 'many'}},\n}"),
        "pincer.json5:2:23: agents.defaults.bootstrapMaxChars: expected a whole number, 0 or more, found the string \"many\""
    );
    assert_eq!(
        error_of("{agents: {defaults: {bootstrapMaxChars: -1}}}"),
        "pincer.json5:1:22: agents.defaults.bootstrapMaxChars: expected a whole number, 0 or more, found the number -1"
    );
    assert_eq!(
        error_of("{agents: {list: {}}}"),
        "pincer.json5:1:11: agents.list: expected an array, found an object"
    );
    assert_eq!(
        error_of("{bindings: [{agentId: 'main', match: {channel: 'c', peer: ['direct', '1']}}]}"),
        "pincer.json5:1:53: bindings[0].match.peer: expected an object, found an array"
    );
    assert_eq!(
        error_of("{session: {dmScope: 3}}"),
        "pincer.json5:1:12: session.dmScope: expected one of main, per-peer, per-channel-peer, per-account-channel-peer, found the number 3"
    );
    assert_eq!(
        error_of("{agents: {list: [{name: 'x'}]}}"),
        "pincer.json5:1:18: agents.list[0]: missing required key `id`"
    );
    assert_eq!(
        error_of("{agents: {defaults: {model: {primary: 'a/b', fallbacks: ['c/d', 3]}}}}"),
        "pincer.json5:1:65: agents.defaults.model.fallbacks[1]: expected a string, found the number 3"
    );
    assert_eq!(
        error_of("{agents: {defaults: {model: 7}}}"),
        "pincer.json5:1:22: agents.defaults.model: expected a model \"provider/model\" or { primary, fallbacks }, found the number 7"
    );
    assert_eq!(
        error_of("{agents: {defaults: {model: {primary: 'a/b', fallback: []}}}}"),
        "pincer.json5:1:46: agents.defaults.model.fallback: unknown key, did you mean `fallbacks`?"
    );
    assert_eq!(
        error_of("[1, 2]"),
        "pincer.json5:1:1: the config must be an object ({ … }), found an array"
    );
}

#[test]
fn syntax_errors_have_a_line_and_a_plain_message() {
    assert_eq!(
        error_of("{\n  agents: {\n    list: ]\n  }\n}"),
        "pincer.json5:3:11: syntax error: expected value"
    );
    assert_eq!(
        error_of("{\n  a: 1\n  b: 2\n}"),
        "pincer.json5:3:3: syntax error: expected comma"
    );
    assert_eq!(
        error_of("{\n  agents: {\n    defaults: {"),
        "pincer.json5:3:16: syntax error: unexpected end of file in an object (the bracket at 3:15 is not closed)"
    );
    assert_eq!(
        error_of("{ a: 'unterminated }"),
        "pincer.json5:1:21: syntax error: unexpected end of file in a string (the bracket at 1:1 is not closed)"
    );
    assert_eq!(
        error_of("{} {}"),
        "pincer.json5:1:4: syntax error: unexpected text after the end of the document"
    );
    assert_eq!(
        error_of("/* never closed"),
        "pincer.json5:1:16: syntax error: unexpected end of file in a comment"
    );
}

#[test]
fn repeated_keys_are_refused_at_the_repeat() {
    assert_eq!(
        error_of("{\n  session: {mainKey: 'a'},\n  session: {mainKey: 'b'},\n}"),
        "pincer.json5:3:3: session: duplicate key \"session\""
    );
}

#[test]
fn env_references_are_substituted_before_checking() {
    let env = MapEnv::new([("MODEL", "anthropic/claude-opus-4"), ("KEY", "sk-1")]);
    let text = "{agents: {defaults: {model: '${MODEL}'}}, models: {providers: {p: {apiKey: 'pre-${KEY}', baseUrl: 'http://h/$${KEY}/$5'}}}}";
    let parsed = parse_str(text, "pincer.json5", &env).unwrap();
    assert_eq!(
        parsed.config.agents.defaults.model,
        Some(ModelSelection::Primary("anthropic/claude-opus-4".into()))
    );
    let p = &parsed.config.models.providers["p"];
    assert_eq!(
        p.api_key.as_ref().map(pincer_base::Secret::expose),
        Some("pre-sk-1")
    );
    assert_eq!(
        p.base_url.as_deref(),
        Some("http://h/${KEY}/$5"),
        "escaped and plain `$` stay"
    );
    assert_eq!(
        get(&parsed.raw, &"agents.defaults.model".parse().unwrap()),
        Some(&serde_json::json!("${MODEL}"))
    );
}

#[test]
fn missing_or_empty_env_variables_are_named_with_their_key() {
    let env = MapEnv::new([("EMPTY", "")]);
    assert_eq!(
        error_with_env(
            "{\n  models: {providers: {\n    p: {apiKey: '${OPENAI_KEY}'},\n    q: {headers: {a: 'x${EMPTY}'}},\n  }},\n}",
            &env
        ),
        "pincer.json5:3:9: models.providers.p.apiKey: environment variable OPENAI_KEY is not set or empty (referenced as ${OPENAI_KEY})\n\
         pincer.json5:4:19: models.providers.q.headers.a: environment variable EMPTY is not set or empty (referenced as ${EMPTY})"
    );
}

#[test]
fn substituted_values_are_checked_like_written_ones() {
    let env = MapEnv::new([("MODEL", "just-a-name")]);
    assert_eq!(
        error_with_env("{agents: {defaults: {model: '${MODEL}'}}}", &env),
        "pincer.json5:1:22: agents.defaults.model: invalid model reference \"just-a-name\": expected provider/model, like \"anthropic/claude-sonnet-4-5\""
    );
}

#[test]
fn truncated_files_never_load() {
    for cut in 1..FULL.len() {
        if !FULL.is_char_boundary(cut) {
            continue;
        }
        let env = MapEnv::new([("LOCAL_KEY", "k")]);
        let result = parse_str(&FULL[..cut], "pincer.json5", &env);
        // A cut inside the leading comment leaves blank text (the defaults); a cut of only
        // the final newline leaves the whole document.
        if let Ok(parsed) = result {
            let whole = FULL[..cut].trim_end() == FULL.trim_end();
            assert!(
                whole || parsed.config == PincerConfig::default(),
                "cut at {cut}"
            );
        }
    }
}

#[test]
fn binary_garbage_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pincer.json5");
    std::fs::write(&path, b"{\n  a: \xff\xfe\x00\x01 }").unwrap();
    assert_eq!(
        load(&path, &no_env()).unwrap_err().to_string(),
        format!(
            "{}:2:6: syntax error: the file is not UTF-8 text",
            path.display()
        )
    );
    assert_eq!(
        error_of("\u{0}\u{1}\u{7f}garbage"),
        "pincer.json5:1:1: syntax error: expected value"
    );
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let deep = format!(
        "{{tools: {{allow: {}{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let err = error_of(&deep);
    assert!(err.starts_with("pincer.json5:1:"), "{err}");
    assert!(err.ends_with(": nested deeper than 64 levels"), "{err}");
    // Unclosed, and far deeper still.
    let err = error_of(&"[".repeat(1_000_000));
    assert!(err.ends_with(": nested deeper than 64 levels"), "{err}");
    // Within the limit, the typed check reports the wrong type as usual.
    let ok_depth = format!("{{tools: {{allow: {}{}}}}}", "[".repeat(60), "]".repeat(60));
    assert_eq!(
        error_of(&ok_depth),
        "pincer.json5:1:18: tools.allow[0]: expected a string, found an array"
    );
}

#[test]
fn numbers_beyond_the_types_are_refused() {
    assert_eq!(
        error_of("{agents: {defaults: {bootstrapMaxChars: 1e400}}}"),
        "pincer.json5:1:22: agents.defaults.bootstrapMaxChars: not a finite number (NaN, Infinity and numbers beyond ±1.8e308 cannot be stored)"
    );
    assert_eq!(
        error_of("{agents: {defaults: {bootstrapMaxChars: NaN}}}"),
        "pincer.json5:1:22: agents.defaults.bootstrapMaxChars: not a finite number (NaN, Infinity and numbers beyond ±1.8e308 cannot be stored)"
    );
    assert_eq!(
        error_of("{auth: {cooldownsMs: [99999999999999999999999999]}}"),
        "pincer.json5:1:23: auth.cooldownsMs[0]: expected a whole number, 0 or more, found the number 100000000000000000000000000"
    );
    assert_eq!(
        error_of("{agents: {defaults: {bootstrapMaxChars: 1.5}}}"),
        "pincer.json5:1:22: agents.defaults.bootstrapMaxChars: expected a whole number, 0 or more, found the number 1.5"
    );
}

#[test]
fn raw_reading_skips_the_typed_checks_but_not_syntax() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pincer.json5");
    assert_eq!(read_raw(&path).unwrap(), None);
    std::fs::write(&path, "{agents: {defaults: {model: 'no-slash'}}, extra: 1}").unwrap();
    assert_eq!(
        read_raw(&path).unwrap(),
        Some(serde_json::json!({"agents": {"defaults": {"model": "no-slash"}}, "extra": 1}))
    );
    std::fs::write(&path, "{").unwrap();
    assert!(read_raw(&path).is_err());
}

#[test]
fn home_and_config_path_come_from_the_injected_environment() {
    let env = MapEnv::new([("PINCER_HOME", "/srv/pincer"), ("HOME", "/home/u")]);
    assert_eq!(
        pincer_home(&env).unwrap(),
        std::path::PathBuf::from("/srv/pincer")
    );
    let env = MapEnv::new([("HOME", "/home/u")]);
    let home = pincer_home(&env).unwrap();
    assert_eq!(home, std::path::PathBuf::from("/home/u/.pincer"));
    assert_eq!(
        config_path(&home),
        std::path::PathBuf::from("/home/u/.pincer/pincer.json5")
    );
    assert_eq!(
        pincer_home(&no_env()).unwrap_err().to_string(),
        "cannot find the Pincer home: neither PINCER_HOME nor HOME is set"
    );
}

#[test]
fn every_value_of_a_parsed_document_can_be_located() {
    fn walk(value: &serde_json::Value, path: KeyPath, out: &mut Vec<KeyPath>) {
        match value {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    walk(v, path.key(k), out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, path.index(i), out);
                }
            }
            _ => {}
        }
        out.push(path);
    }
    let raw = parse_raw(FULL, "pincer.json5").unwrap();
    let mut paths = Vec::new();
    walk(&raw, KeyPath::root(), &mut paths);
    assert!(paths.len() > 80);
    // Each position must point at the key itself (or, for an array element, a value).
    let lines: Vec<&str> = FULL.split('\n').collect();
    let mut seen = BTreeMap::new();
    for path in &paths {
        let at = locate(FULL, path).expect("located");
        let rest: String = lines[at.line - 1].chars().skip(at.column - 1).collect();
        match path.segments().last() {
            Some(PathSegment::Key(key)) => assert!(
                rest.starts_with(key.as_str()) || rest.starts_with(&format!("\"{key}\"")),
                "{path} at {at}: {rest}"
            ),
            Some(PathSegment::Index(_)) => assert!(
                rest.starts_with(['"', '\'', '{', '['])
                    || rest.starts_with(|c: char| c.is_ascii_digit()),
                "{path} at {at}: {rest}"
            ),
            None => assert_eq!(at.to_string(), "2:1"),
        }
        seen.insert(path.to_string(), at.to_string());
    }
    assert_eq!(seen["$schema"], "3:3");
    assert_eq!(seen["agents.list[1].tools.exec.allow[1]"], "17:120");
    assert_eq!(seen["models.providers.local.headers.x-trace"], "38:20");
}

#[test]
fn unreadable_and_oversized_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pincer.json5");
    std::fs::create_dir(&path).unwrap();
    assert_eq!(
        load(&path, &no_env()).unwrap_err().to_string(),
        format!(
            "cannot read {}: Is a directory (os error 21)",
            path.display()
        )
    );
    std::fs::remove_dir(&path).unwrap();
    std::fs::write(&path, " ".repeat(MAX_CONFIG_BYTES as usize + 1)).unwrap();
    assert_eq!(
        load(&path, &no_env()).unwrap_err().to_string(),
        format!(
            "{}: the config file is larger than 4194304 bytes",
            path.display()
        )
    );
}
