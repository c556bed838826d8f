//! The `gateway` section: its defaults, strict checks of `port`, `bind` and `auth.token`
//! with file positions, its place in the schema, and the token's redaction.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::IpAddr;

use pincer_ai::env::MapEnv;
use pincer_config::*;

use crate::common::{assert_refusal_mentions, error_of, parse};
use serde_json::json;

#[test]
fn defaults_apply_when_the_section_is_absent() {
    let gateway = parse("{}").gateway;
    assert_eq!(gateway, GatewayConfig::default());
    assert_eq!(gateway.port(), DEFAULT_GATEWAY_PORT);
    assert_eq!(gateway.port(), 18789);
    assert_eq!(gateway.bind(), GatewayBind::Loopback);
    assert_eq!(gateway.bind().ip(), "127.0.0.1".parse::<IpAddr>().unwrap());
    assert_eq!(gateway.token(), None);
    let empty = parse("{gateway: {port: null, auth: {}}}").gateway;
    assert_eq!(empty, GatewayConfig::default());
}

#[test]
fn port_bind_and_token_load() {
    let gateway = parse("{gateway: {port: 8080, bind: 'lan', auth: {token: 'sekrit'}}}").gateway;
    assert_eq!(gateway.port(), 8080);
    assert_eq!(gateway.bind(), GatewayBind::Lan);
    assert_eq!(gateway.bind().ip(), "0.0.0.0".parse::<IpAddr>().unwrap());
    assert_eq!(gateway.token(), Some("sekrit"));
    for (text, bind) in [
        ("loopback", GatewayBind::Loopback),
        ("localhost", GatewayBind::Loopback),
        (
            "192.168.1.5",
            GatewayBind::Ip("192.168.1.5".parse().unwrap()),
        ),
        ("::1", GatewayBind::Ip("::1".parse().unwrap())),
    ] {
        let loaded = parse(&format!("{{gateway: {{bind: '{text}'}}}}")).gateway;
        assert_eq!(loaded.bind(), bind, "{text}");
        assert_eq!(text.parse::<GatewayBind>().unwrap(), bind);
    }
    assert_eq!(
        GatewayBind::Ip("10.0.0.1".parse().unwrap()).to_string(),
        "10.0.0.1"
    );
    assert_eq!(GatewayBind::Lan.to_string(), "lan");
    // The token may come from the environment.
    let env = MapEnv::new([("GW_TOKEN", "from-env")]);
    let loaded = parse_str("{gateway: {auth: {token: '${GW_TOKEN}'}}}", "x", &env).unwrap();
    assert_eq!(loaded.config.gateway.token(), Some("from-env"));
    assert_eq!(loaded.raw["gateway"]["auth"]["token"], "${GW_TOKEN}");
    // Serialised back in the same shape.
    assert_eq!(
        serde_json::to_value(&gateway).unwrap(),
        json!({"port": 8080, "bind": "lan", "auth": {"token": "sekrit"}})
    );
    assert_eq!(
        serde_json::to_value(GatewayConfig::default()).unwrap(),
        json!({})
    );
}

#[test]
fn bad_values_name_the_key_and_the_line() {
    assert_eq!(
        error_of("{\n  gateway: {\n    bind: 'nowhere',\n  },\n}"),
        "pincer.json5:3:5: gateway.bind: expected \"loopback\", \"lan\" or an IP address such as \"192.168.1.5\", found \"nowhere\""
    );
    assert_eq!(
        error_of("{gateway: {bind: 4}}"),
        "pincer.json5:1:12: gateway.bind: expected \"loopback\", \"lan\" or an IP address such as \"192.168.1.5\", found the number 4"
    );
    assert_eq!(
        error_of("{gateway: {\n  port: 0}}"),
        "pincer.json5:2:3: gateway.port: expected a port number from 1 to 65535, found 0"
    );
    assert_eq!(
        error_of("{gateway: {port: 70000}}"),
        "pincer.json5:1:12: gateway.port: expected a port number from 1 to 65535, found 70000"
    );
    assert_eq!(
        error_of("{gateway: {port: -1}}"),
        "pincer.json5:1:12: gateway.port: expected a port number from 1 to 65535, found -1"
    );
    assert_eq!(
        error_of("{gateway: {port: '80'}}"),
        "pincer.json5:1:12: gateway.port: expected a port number from 1 to 65535, found the string \"80\""
    );
    assert_eq!(
        error_of("{gateway: {prot: 80}}"),
        "pincer.json5:1:12: gateway.prot: unknown key, did you mean `port`?"
    );
    assert_eq!(
        error_of("{gateway: {auth: {token: '', mode: 'token'}}}"),
        "pincer.json5:1:30: gateway.auth.mode: unknown key (known keys: token)"
    );
    assert_eq!(
        error_of("{gateway: {auth: {\n  token: ' '}}}"),
        "pincer.json5:2:3: gateway.auth.token: must not be empty (leave it out to use the generated token file)"
    );
    assert_eq!(
        "somewhere".parse::<GatewayBind>().unwrap_err().to_string(),
        "expected \"loopback\", \"lan\" or an IP address such as \"192.168.1.5\", found \"somewhere\""
    );
}

#[test]
fn the_schema_describes_the_section() {
    let schema = schema_json();
    let gateway = &schema["$defs"]["GatewayConfig"];
    assert_eq!(gateway["additionalProperties"], false, "{gateway}");
    let port = &gateway["properties"]["port"];
    assert_eq!(
        (port["minimum"].as_u64(), port["maximum"].as_u64()),
        (Some(1), Some(65535)),
        "{port}"
    );
    let bind = &schema["$defs"]["GatewayBind"];
    assert_eq!(
        bind["anyOf"][0]["enum"],
        json!(["loopback", "localhost", "lan"])
    );
    let auth = &schema["$defs"]["GatewayAuthConfig"];
    assert_eq!(
        auth["properties"]["token"]["type"],
        json!(["string", "null"]),
        "{auth}"
    );
}

#[test]
fn the_token_is_masked() {
    let raw = json!({"gateway": {"port": 9000, "auth": {"token": "abcdef-0123456789-xyz"}}});
    assert_eq!(
        redact(&raw),
        json!({"gateway": {"port": 9000, "auth": {"token": "abc***xyz"}}})
    );
    let short = json!({"gateway": {"auth": {"token": "tiny"}}});
    assert_eq!(redact(&short)["gateway"]["auth"]["token"], "***");
    let reference = json!({"gateway": {"auth": {"token": "${GW_TOKEN}"}}});
    assert_eq!(redact(&reference), reference);
}

#[test]
fn messages_queue_is_typed_and_strict() {
    let config = parse("{messages: {queue: {mode: 'collect', debounceMs: 500, cap: 5}}}");
    assert_eq!(
        config.messages.queue,
        QueueConfig {
            mode: Some(QueueMode::Collect),
            debounce_ms: Some(500),
            cap: Some(5),
        }
    );
    assert_eq!(parse("{}").messages.queue, QueueConfig::default());
    assert_refusal_mentions(
        "{messages: {queue: {mode: 'later'}}}",
        &["messages.queue.mode", "steer, followup, collect, interrupt"],
    );
    assert_refusal_mentions(
        "{messages: {queue: {debounce: 5}}}",
        &["messages.queue", "debounce"],
    );
}

#[test]
fn heartbeat_and_cron_are_typed_and_checked_with_their_lines() {
    let config = parse(
        "{agents: {defaults: {heartbeat: {every: '30m', activeHours: {start: '22:00', end: '06:00', timezone: 'Europe/Berlin'}, target: 'last'}},
          list: [{id: 'ops', heartbeat: {every: '0m'}}]},
          cron: {maxConcurrentRuns: 2, retry: {maxAttempts: 3, backoffMs: [60000]}}}",
    );
    let heartbeat = config.agents.defaults.heartbeat.unwrap();
    assert_eq!(heartbeat.every.as_deref(), Some("30m"));
    assert_eq!(
        heartbeat.active_hours,
        Some(ActiveHoursConfig {
            start: "22:00".into(),
            end: "06:00".into(),
            timezone: Some("Europe/Berlin".into()),
        })
    );
    assert_eq!(
        config.agents.list[0]
            .heartbeat
            .as_ref()
            .unwrap()
            .every
            .as_deref(),
        Some("0m")
    );
    assert_eq!(config.cron.max_concurrent_runs, Some(2));

    assert_refusal_mentions(
        "{agents: {defaults: {heartbeat: {every: 'often'}}}}",
        &[
            "agents.defaults.heartbeat.every",
            "does not start with a number",
        ],
    );
    assert_refusal_mentions(
        "{agents: {defaults: {heartbeat: {activeHours: {start: '7:00', end: '24:00'}}}}}",
        &["activeHours.start", "HH:MM"],
    );
    assert_refusal_mentions(
        "{agents: {list: [{id: 'a', heartbeat: {to: '123'}}]}}",
        &["agents.list[0].heartbeat.to", "channel"],
    );
    assert_refusal_mentions(
        "{cron: {maxConcurrentRuns: 0}}",
        &["cron.maxConcurrentRuns"],
    );
    assert_refusal_mentions(
        "{cron: {retry: {maxAttempts: 0}}}",
        &["cron.retry.maxAttempts"],
    );
}

#[test]
fn browser_checks_and_http_limits_load() {
    let gateway = parse(
        "{gateway: {allowedHosts: ['Gateway.LAN', '*.example.com', '10.0.0.5'], \
         controlUi: {allowedOrigins: ['https://chat.example.com:443', '*']}, \
         http: {headerReadTimeoutMs: 1000, maxConnections: 64}}}",
    )
    .gateway;
    let hosts: Vec<String> = gateway
        .allowed_hosts
        .iter()
        .map(|h| h.to_string())
        .collect();
    assert_eq!(hosts, ["gateway.lan", "*.example.com", "10.0.0.5"]);
    let origins: Vec<String> = gateway
        .control_ui
        .allowed_origins
        .iter()
        .map(|o| o.to_string())
        .collect();
    assert_eq!(origins, ["https://chat.example.com", "*"]);
    assert_eq!(gateway.http.header_read_timeout_ms, Some(1000));
    assert_eq!(gateway.http.max_connections, Some(64));

    assert_refusal_mentions(
        "{gateway: {controlUi: {allowedOrigins: ['https://a.example/']}}}",
        &["\"https://a.example/\" is not a web origin (scheme://host[:port]) or *"],
    );
    assert_refusal_mentions(
        "{gateway: {controlUi: {allowedOrigins: ['null']}}}",
        &["gateway.controlUi.allowedOrigins"],
    );
    assert_refusal_mentions(
        "{gateway: {allowedHosts: ['a.example:80']}}",
        &["gateway.allowedHosts"],
    );
    let error = error_of("{gateway: {http: {headerReadTimeoutMs: 0}}}");
    assert!(
        error.contains("gateway.http.headerReadTimeoutMs"),
        "{error}"
    );
    assert!(error.contains("must be at least 1"), "{error}");
    assert_refusal_mentions(
        "{gateway: {http: {maxConnections: 0}}}",
        &["gateway.http.maxConnections"],
    );
    assert_refusal_mentions("{gateway: {http: {idleMs: 5}}}", &["idleMs"]);
}

#[test]
fn the_control_ui_root_loads_as_written() {
    let gateway =
        parse("{gateway: {controlUi: {root: '~/node_modules/openclaw/dist/control-ui'}}}").gateway;
    // `~/` is expanded where the path is used (the CLI), like the other paths.
    assert_eq!(
        gateway.control_ui.root.as_deref(),
        Some("~/node_modules/openclaw/dist/control-ui")
    );
    assert!(gateway.control_ui.allowed_origins.is_empty());
    assert_eq!(parse("{gateway: {}}").gateway.control_ui.root, None);
    assert_refusal_mentions(
        "{gateway: {controlUi: {root: 5}}}",
        &["gateway.controlUi.root"],
    );
    assert_refusal_mentions("{gateway: {controlUi: {basePath: '/x'}}}", &["basePath"]);
}
