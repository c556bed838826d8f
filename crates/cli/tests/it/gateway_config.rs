//! `pincer gateway config set|show|clear` and where the gateway's settings take effect
//! (flag > environment > config > default), through the real binary.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::gateway::*;
use common::{Home, mode};
use serde_json::Value;
use serde_json::json;

fn config_json(home: &Home) -> Value {
    let text = std::fs::read_to_string(home.path().join("pincer.json5")).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `gateway config show --json` of a home with no gateway settings.
fn default_settings(home: &Home) -> Value {
    json!({
        "configPath": home.path().join("pincer.json5").to_str().unwrap(),
        "config": with_run_defaults(json!({
            "port": {"value": 18789, "source": "default"},
            "bind": {"value": "loopback", "source": "default"},
            "token": {"value": null, "source": "default"},
        })),
    })
}

/// `config` of `show --json` with the run settings (none set) after port, bind and token.
fn with_run_defaults(mut config: Value) -> Value {
    let defaults = json!({
        "provider": null, "profile": null, "withTools": true, "toolAllow": [],
        "toolMaxSteps": null, "memory": null, "pairingPolicy": null,
        "pairingAllowFrom": null, "pairingPendingTtlMs": 3_600_000, "pairingPendingMax": 3,
    });
    for (key, value) in defaults.as_object().unwrap() {
        config[key] = json!({"value": value, "source": "default"});
    }
    config
}

/// The lines of `show` for the run settings, none set.
const RUN_DEFAULTS_TEXT: &str = "provider: not set (default)\nprofile: not set (default)\n\
    withTools: true (default)\ntoolAllow: [] (default)\ntoolMaxSteps: not set (default)\n\
    memory: not set (default)\npairingPolicy: not set (default)\n\
    pairingAllowFrom: not set (default)\npairingPendingTtlMs: 3600000 (default)\n\
    pairingPendingMax: 3 (default)\n";

#[test]
fn gateway_config_set_show_clear_round_trip() {
    let home = Home::new();
    let config_path = home.path().join("pincer.json5");
    // Other sections are kept by every edit.
    home.write_config("{ session: { mainKey: 'home' } }");

    let show = home.run_ok(&["gateway", "config", "show"]);
    assert_eq!(
        show.stdout(),
        format!(
            "config: {}\nport: 18789 (default)\nbind: loopback (default)\n\
             token: not set (default: the token file, see `pincer gateway token`)\n{RUN_DEFAULTS_TEXT}",
            config_path.display()
        )
    );
    let json_show = home.run_ok(&["gateway", "config", "show", "--json"]);
    let shown: Value = serde_json::from_str(&json_show.stdout()).unwrap();
    assert_eq!(shown, default_settings(&home));

    let set = home.run_ok(&[
        "gateway",
        "config",
        "set",
        "--port",
        "9123",
        "--bind",
        "127.0.0.1",
        "--token",
        "abcdef-0123456789-xyz",
    ]);
    assert_eq!(set.stdout(), "gateway config updated\n");
    assert_eq!(set.stderr(), "");
    assert_eq!(mode(&config_path), 0o600);
    // One setting at a time keeps the others.
    let set = home.run_ok(&["gateway", "config", "set", "--port", "9124"]);
    assert_eq!(set.stdout(), "gateway config updated\n");
    assert_eq!(
        config_json(&home),
        json!({
            "session": {"mainKey": "home"},
            "gateway": {"port": 9124, "bind": "127.0.0.1", "auth": {"token": "abcdef-0123456789-xyz"}},
        })
    );

    let show = home.run_ok(&["gateway", "config", "show"]);
    assert_eq!(
        show.stdout(),
        format!(
            "config: {}\nport: 9124 (override)\nbind: 127.0.0.1 (override)\ntoken: abc***xyz (override)\n{RUN_DEFAULTS_TEXT}",
            config_path.display()
        )
    );
    let shown: Value =
        serde_json::from_str(&home.run(&["gateway", "config", "show", "--json"]).stdout()).unwrap();
    assert_eq!(
        shown,
        json!({
            "configPath": config_path.to_str().unwrap(),
            "config": with_run_defaults(json!({
                "port": {"value": 9124, "source": "override"},
                "bind": {"value": "127.0.0.1", "source": "override"},
                "token": {"value": "abc***xyz", "source": "override"},
            })),
        })
    );
    assert!(!show.stdout().contains("0123456789"));
    // The generic config commands see the same section, secret masked.
    let get = home.run_ok(&["config", "get", "gateway.auth.token"]);
    assert_eq!(get.stdout(), "abc***xyz\n");
    // The configured token is the gateway's token.
    let token = home.run_ok(&["gateway", "token"]);
    assert_eq!(token.stdout(), "abcdef-0123456789-xyz\n");
    token.assert_stderr_has(&["from gateway.auth.token"]);
    assert!(!home.path().join("gateway-token").exists());
    // A short token is masked whole.
    home.run(&["gateway", "config", "set", "--token", "tiny"])
        .assert_ok();
    let shown: Value =
        serde_json::from_str(&home.run(&["gateway", "config", "show", "--json"]).stdout()).unwrap();
    assert_eq!(shown["config"]["token"]["value"], "***");

    // Bad values: exit 1, a message saying what would do, and the file untouched.
    let before = std::fs::read_to_string(&config_path).unwrap();
    for (args, message) in [
        (
            vec![],
            "nothing to set: give --port N, --bind loopback|lan|<ip address>",
        ),
        (
            vec!["--port", "0"],
            "invalid --port \"0\": expected a port number from 1 to 65535",
        ),
        (
            vec!["--port", "70000"],
            "invalid --port \"70000\": expected a port number from 1 to 65535",
        ),
        (
            vec!["--port", "http"],
            "invalid --port \"http\": expected a port number from 1 to 65535",
        ),
        (
            vec!["--bind", "nowhere"],
            "invalid --bind \"nowhere\": expected loopback (this machine only), lan (every interface) or an IP address",
        ),
        (vec!["--token", ""], "invalid --token: it must not be empty"),
        (
            vec!["--token", "two words"],
            "invalid --token: it must not contain spaces",
        ),
        (
            vec!["--port", "9000", "--bind", "x"],
            "invalid --bind \"x\"",
        ),
    ] {
        let mut all = vec!["gateway", "config", "set"];
        all.extend(&args);
        let run = home.run(&all);
        assert_eq!(run.code(), 1, "{args:?}: {}", run.stderr());
        assert_eq!(run.stdout(), "", "{args:?}");
        assert!(
            run.stderr().starts_with(&format!("error: {message}")),
            "{args:?}: {}",
            run.stderr()
        );
    }
    assert_eq!(std::fs::read_to_string(&config_path).unwrap(), before);

    let clear = home.run_ok(&["gateway", "config", "clear"]);
    assert_eq!(clear.stdout(), "gateway config cleared\n");
    assert_eq!(config_json(&home), json!({"session": {"mainKey": "home"}}));
    let shown: Value =
        serde_json::from_str(&home.run(&["gateway", "config", "show", "--json"]).stdout()).unwrap();
    assert_eq!(shown, default_settings(&home));
    // Clearing again, or with no file at all, is fine and writes nothing.
    let again = home.run_ok(&["gateway", "config", "clear"]);
    assert_eq!(again.stdout(), "gateway config cleared\n");
    let empty = Home::new();
    let clear = empty.run_ok(&["gateway", "config", "clear"]);
    assert_eq!(clear.stdout(), "gateway config cleared\n");
    assert!(!empty.path().join("pincer.json5").exists());
}

#[test]
fn a_bad_gateway_section_is_reported_with_its_line_and_clear_repairs_it() {
    let home = Home::new();
    home.write_config("{\n  gateway: {\n    bind: 'lan',\n    port: 0,\n  },\n}\n");
    let path = home.path().join("pincer.json5");
    for args in [
        vec!["gateway", "config", "show"],
        vec!["gateway", "run", "--port", "0"],
        vec!["gateway", "token"],
    ] {
        let run = home.run(&args);
        assert_eq!(run.code(), 1, "{args:?}");
        assert!(
            run.stderr().contains(&format!(
                "{}:4:5: gateway.port: expected a port number from 1 to 65535, found 0",
                path.display()
            )),
            "{args:?}: {}",
            run.stderr()
        );
    }
    home.write_config("{ gateway: { bind: 'nowhere' } }");
    let run = home.run(&["gateway", "config", "show"]);
    run.assert_fails(1, &format!(
            "{}:1:14: gateway.bind: expected \"loopback\", \"lan\" or an IP address such as \"192.168.1.5\", found \"nowhere\"",
            path.display()
        ));
    run.assert_stderr_has(&["`pincer gateway config clear`"]);
    // The section can be replaced or removed although it does not load.
    home.run(&["gateway", "config", "set", "--bind", "lan"])
        .assert_ok();
    assert_eq!(config_json(&home), json!({"gateway": {"bind": "lan"}}));
    home.run(&["gateway", "config", "clear"]).assert_ok();
    assert_eq!(config_json(&home), json!({}));
}

#[test]
fn the_gateway_listens_where_the_config_says_unless_told_otherwise() {
    let home = Home::new();
    let configured = free_port();
    home.run(&[
        "gateway",
        "config",
        "set",
        "--port",
        &configured.to_string(),
        "--token",
        "configured-token-123",
    ])
    .assert_ok();

    // The config's port and token; no token file is generated for it.
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    assert_eq!(gateway.port, configured);
    assert!(gateway.preamble.is_empty(), "{:?}", gateway.preamble);
    assert!(!home.path().join("gateway-token").exists());
    let bearer = |token: &str| format!("Authorization: Bearer {token}\r\n");
    assert_eq!(
        http_status_with(configured, "/v1/models", &bearer("configured-token-123")).as_deref(),
        Some("HTTP/1.1 200 OK")
    );
    assert_eq!(
        http_status_with(configured, "/v1/models", &bearer("wrong")).as_deref(),
        Some("HTTP/1.1 401 Unauthorized")
    );
    drop(gateway);

    // PINCER_GATEWAY_PORT beats the config, --port beats both; PINCER_GATEWAY_TOKEN beats
    // the config's token.
    let from_env = free_port();
    let env_home = Home {
        dir: home.dir,
        env: vec![
            ("PINCER_GATEWAY_PORT".into(), from_env.to_string()),
            ("PINCER_GATEWAY_TOKEN".into(), "env-token-456".into()),
        ],
    };
    let gateway = Foreground::start(&env_home, &["gateway", "run"]);
    assert_eq!(gateway.port, from_env);
    assert_eq!(
        http_status_with(from_env, "/v1/models", &bearer("env-token-456")).as_deref(),
        Some("HTTP/1.1 200 OK")
    );
    drop(gateway);
    let gateway = Foreground::start(&env_home, &["gateway", "run", "--port", "0"]);
    assert!(
        gateway.port != from_env && gateway.port != configured,
        "{}",
        gateway.port
    );
    drop(gateway);

    // A configured network bind still needs auth.
    env_home
        .run(&["gateway", "config", "set", "--bind", "lan"])
        .assert_ok();
    let run = env_home.run(&["gateway", "run", "--auth", "none", "--port", "0"]);
    run.assert_fails(1, "refusing to listen on 0.0.0.0 with --auth none");
    // --bind beats the config.
    let gateway = Foreground::start(
        &env_home,
        &[
            "gateway", "run", "--auth", "none", "--bind", "loopback", "--port", "0",
        ],
    );
    assert!(http_status(gateway.port, "/readyz").is_some());
}
