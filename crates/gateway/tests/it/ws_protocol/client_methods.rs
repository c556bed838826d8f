//! The methods OpenClaw's own clients call (the Control UI and `openclaw tui`, as recorded in
//! `reference/openclaw-clients-wire.md`) all answer, and the ones that describe Pincer
//! answer exactly: commands, agents, identity, models, config, session flags, logs, and
//! OpenClaw's empty shapes for what Pincer does not have.

use super::*;

const KEY: &str = "agent:main:main";

/// A server with cron whose main session has one turn, an admin client (as both clients
/// connect) and the cron directory.
async fn with_main_session() -> (Server, Client, tempfile::TempDir) {
    let cron_dir = tempfile::tempdir().unwrap();
    let cron = pincer_automation::cron::CronService::open(
        cron_dir.path().join("cron"),
        pincer_automation::cron::CronSettings::default(),
        std::sync::Arc::new(pincer_automation::system_events::SystemClock),
        jiff::tz::TimeZone::UTC,
    );
    let server = start_with(hi_scenario(), move |options| options.cron = Some(cron)).await;
    let (mut client, _) = Client::connect(&server.url, &["operator.admin"]).await;
    let accepted = client
        .call(
            "agent",
            json!({"message": "ping", "sessionKey": KEY, "idempotencyKey": "setup-1"}),
        )
        .await;
    let done = client.response(accepted["id"].as_str().unwrap()).await;
    assert_eq!(done["payload"]["status"], "ok", "{done}");
    (server, client, cron_dir)
}

/// Calls each `(method, params)` and asserts it answered `ok`.
async fn all_answer(client: &mut Client, calls: &[(&str, Value)]) {
    for (method, params) in calls {
        client.ok(method, params.clone()).await;
    }
}

#[tokio::test]
async fn every_method_the_control_ui_calls_answers() {
    let (_server, mut client, _cron) = with_main_session().await;
    // Its recorded list, in order, each with the params it sent (`connect` is the
    // handshake, already done).
    let calls = [
        ("sessions.subscribe", json!({})),
        (
            "sessions.list",
            json!({"includeGlobal": true, "includeUnknown": true, "configuredAgentsOnly": true,
                   "limit": 200, "includeDerivedTitles": true, "includeLastMessage": true,
                   "ownerFirst": true, "agentId": "main"}),
        ),
        ("config.get", json!({})),
        ("update.status", json!({})),
        ("plugins.controlUi.list", json!({})),
        ("agents.list", json!({})),
        ("exec.approval.list", json!({})),
        ("plugin.approval.list", json!({})),
        ("openclaw.approval.list", json!({})),
        ("sessions.observer.visibility", json!({"visible": true})),
        (
            "plugin.surface.refresh",
            json!({"surface": "canvas", "observedUrl": "http://127.0.0.1:1/__openclaw__/cap/x"}),
        ),
        ("question.list", json!({})),
        ("agent.identity.get", json!({"agentId": "main"})),
        ("models.authStatus", json!({"agentId": "main"})),
        (
            "users.prefs.get",
            json!({"keys": ["ui.theme", "ui.themeMode"]}),
        ),
        (
            "controlUi.sessionPullRequests.subscribe",
            json!({"sessionKeys": []}),
        ),
        ("board.get", json!({"sessionKey": KEY, "agentId": "main"})),
        ("projects.list", json!({})),
        (
            "chat.startup",
            json!({"sessionKey": KEY, "limit": 80, "maxBytes": 262144}),
        ),
        ("sessions.viewers.set", json!({"sessionKeys": [KEY]})),
        (
            "sessions.github.options",
            json!({"sessionKey": KEY, "agentId": "main"}),
        ),
        ("talk.catalog", json!({})),
        (
            "session.members.listEvidence",
            json!({"sessionKey": KEY, "agentId": "main"}),
        ),
        (
            "sessions.messages.subscribe",
            json!({"key": KEY, "includeApprovals": true}),
        ),
        ("sessions.groups.list", json!({})),
        ("mentions.list", json!({})),
        ("progressCard.get", json!({"sessionKey": KEY})),
        ("sessions.groups.defaults", json!({})),
        (
            "cron.list",
            json!({"agentId": "main", "includeDisabled": true, "limit": 50, "offset": 0}),
        ),
        ("cron.status", json!({})),
        ("taskSuggestions.list", json!({"agentId": "main"})),
        ("system.info", json!({})),
        ("sessions.branches.list", json!({"sessionKey": KEY})),
        (
            "session.discussion.info",
            json!({"sessionKey": KEY, "agentId": "main"}),
        ),
        (
            "sessions.companion.state",
            json!({"sessionKey": KEY, "agentId": "main"}),
        ),
        (
            "tasks.list",
            json!({"sessionKey": KEY, "agentId": "main", "status": ["queued", "running"], "limit": 200}),
        ),
        (
            "sessions.catalog.list",
            json!({"agentId": "main", "limitPerHost": 40, "progressId": "p-1", "allowPartialResults": true}),
        ),
        (
            "chat.history",
            json!({"sessionKey": KEY, "limit": 20, "maxBytes": 65536}),
        ),
        ("sessions.describe", json!({"key": KEY})),
        (
            "chat.send",
            json!({"sessionKey": KEY, "message": "ping", "deliver": false, "idempotencyKey": "ui-send-1"}),
        ),
        (
            "sessions.patch",
            json!({"key": KEY, "agentId": "main", "expectedMarkedUnreadAt": null, "unread": false}),
        ),
        (
            "models.list",
            json!({"view": "configured", "sessionKey": KEY, "agentId": "main"}),
        ),
        (
            "chat.metadata",
            json!({"agentId": "main", "sessionKey": KEY}),
        ),
        (
            "sessions.create",
            json!({"agentId": "main", "parentSessionKey": KEY, "emitCommandHooks": true, "succeedsParent": false}),
        ),
    ];
    // The recording's 45 headings, `connect` included.
    assert_eq!(calls.len() + 1, 45);
    all_answer(&mut client, &calls).await;
}

#[tokio::test]
async fn every_method_the_tui_calls_answers() {
    let (_server, mut client, _cron) = with_main_session().await;
    let calls = [
        ("sessions.subscribe", json!({})),
        ("agents.list", json!({})),
        ("question.list", json!({})),
        ("plugin.approval.list", json!({})),
        ("taskSuggestions.list", json!({})),
        ("chat.history", json!({"sessionKey": KEY, "limit": 200})),
        (
            "commands.list",
            json!({"agentId": "main", "scope": "text", "includeArgs": false}),
        ),
        (
            "chat.send",
            json!({"sessionKey": KEY, "message": "ping", "deliver": false, "idempotencyKey": "tui-send-1"}),
        ),
        ("sessions.describe", json!({"key": KEY})),
        ("sessions.list", json!({"agentId": "main", "limit": 1})),
        (
            "sessions.create",
            json!({"key": "tui-1", "agentId": "main", "parentSessionKey": KEY,
                   "succeedsParent": true, "emitCommandHooks": true}),
        ),
    ];
    // The recording's 12 headings, `connect` included.
    assert_eq!(calls.len() + 1, 12);
    all_answer(&mut client, &calls).await;
}

#[tokio::test]
async fn the_control_uis_other_pages_answer() {
    let (_server, mut client, _cron) = with_main_session().await;
    let calls = [
        ("usage.status", json!({})),
        ("tools.catalog", json!({})),
        ("tools.effective", json!({"sessionKey": KEY})),
        ("skills.status", json!({})),
        ("logs.tail", json!({})),
        ("node.list", json!({})),
        ("device.pair.list", json!({})),
        // The Systems and Plugins pages.
        ("environments.list", json!({"projection": "profiles"})),
        ("plugins.list", json!({})),
        (
            "plugins.catalog.browse",
            json!({"intent": "all", "pageSize": 100}),
        ),
        // The Activity, Debug, Usage and Skills pages.
        (
            "artifacts.list",
            json!({"sessionKey": KEY, "agentId": "main", "type": "image", "limit": 4}),
        ),
        ("diagnostics.lanes", json!({})),
        (
            "sessions.usage",
            json!({"startDate": "2026-10-29", "endDate": "2026-11-27", "agentId": "main"}),
        ),
        ("skills.library.list", json!({"scope": "all"})),
        ("skills.search", json!({"limit": 20})),
    ];
    all_answer(&mut client, &calls).await;
}

#[tokio::test]
async fn commands_list_offers_pincers_chat_commands() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.read"]).await;
    // As the TUI asks, with each command's arguments.
    let text_commands = json!({"agentId": "main", "scope": "text", "includeArgs": true});
    let res = client.ok("commands.list", text_commands).await;
    let entry = |name: &str, aliases: &[&str], category: &str, args: bool, description: &str| {
        json!({"name": name, "nativeName": name, "textAliases": aliases,
               "description": description, "category": category, "source": "native",
               "scope": "both", "acceptsArgs": args})
    };
    assert_eq!(
        res,
        json!({"commands": [
            entry("new", &["/new"], "session", true, "Begin a fresh session; any text after it is the new session's first message."),
            entry("reset", &["/reset"], "session", true, "Same as /new: archive this session and begin a fresh one."),
            entry("compact", &["/compact"], "session", true, "Summarise this session's older conversation now (the latest is kept as it is); text after it says what the summary should keep."),
            entry("status", &["/status"], "status", false, "Show the session, its model, thinking level and token counts."),
            entry("usage", &["/usage"], "status", false, "Show this session's token counts and cost so far."),
            entry("model", &["/model", "/models"], "options", true, "Show this session's model, or set it (`default` goes back to the agent's)."),
            entry("think", &["/think", "/thinking", "/t"], "options", true, "Show this session's thinking level, or set it."),
            entry("verbose", &["/verbose", "/v"], "options", true, "Show this session's verbose level, or set it."),
            entry("activation", &["/activation"], "options", true, "In a group: answer only when mentioned, or every message."),
            entry("queue", &["/queue"], "options", true, "Show how this session takes a message while it is busy, or set it."),
            entry("stop", &["/stop", "/abort"], "session", false, "Stop the session's running reply."),
            entry("subagents", &["/subagents"], "session", true, "This session's background sub-agents: list them, show one, read its log, send it a message or stop it."),
            entry("approve", &["/approve"], "session", true, "Answer a command waiting for your approval (tools.exec.ask)."),
            entry("help", &["/help", "/commands"], "status", false, "Show the chat commands."),
        ]})
    );
    let bad = client
        .call("commands.list", json!({"scope": "voice"}))
        .await;
    assert_eq!(bad["error"]["code"], "INVALID_REQUEST", "{bad}");
}

#[tokio::test]
async fn agents_list_describes_the_configured_agents() {
    let (server, mut client) = start_connected(hi_scenario(), &["operator.read"]).await;
    let res = client.ok("agents.list", json!({})).await;
    let workspace = server.dir.path().join("workspace");
    let off = json!([{"id": "off", "label": "off"}]);
    assert_eq!(
        res,
        json!({
            "defaultId": "main", "ownership": "sole", "selectionRequired": false,
            "mainKey": "main", "scope": "per-sender",
            "agents": [{
                "id": "main", "kind": "agent", "name": "Main",
                "workspace": workspace.display().to_string(), "workspaceGit": false,
                "thinkingLevels": off, "thinkingOptions": ["off"], "thinkingDefault": "off",
                "model": {"primary": "mock/m", "fallbacks": ["mock/gone"]},
            }],
        })
    );
}

#[tokio::test]
async fn agent_identity_comes_from_identity_md() {
    let (server, mut client) = start_connected(hi_scenario(), &["operator.read"]).await;
    // No IDENTITY.md: the configured name.
    let res = client
        .ok("agent.identity.get", json!({"agentId": "main"}))
        .await;
    assert_eq!(
        res,
        json!({"agentId": "main", "name": "Main", "nameSource": "config", "avatar": "A"})
    );
    let workspace = server.dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(
        workspace.join("IDENTITY.md"),
        "# IDENTITY.md\n\n- **Name:** Clawd\n- **Creature:** _(AI? robot?)_\n- **Emoji:** 🦞\n- **Avatar:** https://example.com/a.png\n",
    )
    .unwrap();
    let res = client.ok("agent.identity.get", json!({})).await;
    assert_eq!(
        res,
        json!({"agentId": "main", "name": "Clawd", "nameSource": "workspace",
               "avatar": "https://example.com/a.png", "emoji": "🦞",
               "avatarSource": "remote URL", "avatarStatus": "remote"})
    );
    let res = client
        .ok("agent.identity.get", json!({"agentId": "nobody"}))
        .await;
    assert_eq!(
        res,
        json!({"agentId": "nobody", "name": "Assistant", "nameSource": "default", "avatar": "A"})
    );
}

#[tokio::test]
async fn models_list_shows_the_configured_models_only() {
    let (_server, mut client) = start_connected(hi_scenario(), &["operator.read"]).await;
    // As the Control UI's model picker asks.
    let configured = json!({"view": "configured", "agentId": "main"});
    let res = client.ok("models.list", configured).await;
    let off = json!([{"id": "off", "label": "off"}]);
    assert_eq!(
        res,
        json!({
            "models": [
                {"id": "m", "name": "Mock M", "provider": "mock", "reasoning": false,
                 "contextWindow": 128_000, "tags": ["default"], "thinkingLevels": off,
                 "thinkingDefault": "off", "manualSelectionAllowed": true, "available": true},
                {"id": "gone", "name": "gone", "provider": "mock", "reasoning": false,
                 "tags": ["fallback"], "thinkingLevels": off, "thinkingDefault": "off",
                 "manualSelectionAllowed": true, "available": false},
            ],
            "accountSelection": {"kind": "automatic", "label": "Automatic account selection"},
        })
    );
    let auth = client.ok("models.authStatus", json!({})).await;
    assert_eq!(
        auth["providers"],
        json!([{"provider": "mock", "authProvider": "mock", "displayName": "mock",
                "status": "static", "profiles": [], "apiKey": {"source": "config"}}])
    );
    let unknown = client
        .call("models.list", json!({"agentId": "nobody"}))
        .await;
    assert_eq!(unknown["error"]["message"], "unknown agentId: nobody");
}

#[tokio::test]
async fn sessions_patch_keeps_pinned_and_unread_and_refuses_another_agent() {
    let (_server, mut client, _cron) = with_main_session().await;
    let res = client
        .ok(
            "sessions.patch",
            json!({"key": KEY, "agentId": "main", "pinned": true, "unread": true}),
        )
        .await;
    assert_eq!(res["entry"]["pinned"], true, "{res}");
    assert_eq!(res["entry"]["unread"], true);
    assert!(res["entry"]["pinnedAt"].is_i64());
    let list = client.call("sessions.list", json!({})).await;
    let row = &list["payload"]["sessions"][0];
    assert_eq!(
        (&row["key"], &row["pinned"], &row["unread"]),
        (&json!(KEY), &json!(true), &json!(true))
    );
    let res = client
        .ok("sessions.patch", json!({"key": KEY, "pinned": false}))
        .await;
    assert_eq!(res["entry"]["pinned"], false, "{res}");
    assert_eq!(res["entry"].get("pinnedAt"), None);
    let moved = client
        .call("sessions.patch", json!({"key": KEY, "agentId": "work"}))
        .await;
    assert_eq!(
        moved["error"]["message"],
        "sessions.patch cannot move session agent:main:main to another agent; its agent is main"
    );
    let bad = client
        .call("sessions.patch", json!({"key": KEY, "unread": "yes"}))
        .await;
    assert_eq!(bad["error"]["message"], "unread must be a boolean");
}

#[tokio::test]
async fn logs_tail_reads_the_log_from_a_cursor() {
    let (server, mut client) = start_connected(hi_scenario(), &["operator.read"]).await;
    let log = server.dir.path().join("gateway.log");
    let empty = client.call("logs.tail", json!({})).await;
    assert_eq!(
        empty["payload"],
        json!({"file": log.display().to_string(), "cursor": 0, "size": 0, "lines": [],
               "truncated": false, "reset": false})
    );
    std::fs::write(&log, "started\nauth Bearer abc123\n").unwrap();
    let first = client.call("logs.tail", json!({"limit": 10})).await;
    assert_eq!(
        first["payload"]["lines"],
        json!(["started", "auth Bearer ***"])
    );
    let cursor = first["payload"]["cursor"].clone();
    assert_eq!(cursor, 27);
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    std::io::Write::write_all(&mut f, b"next\n").unwrap();
    let next = client.call("logs.tail", json!({"cursor": cursor})).await;
    assert_eq!(
        (&next["payload"]["lines"], &next["payload"]["reset"]),
        (&json!(["next"]), &json!(false))
    );
}

#[tokio::test]
async fn absent_features_answer_openclaws_empty_shapes() {
    let (server, mut client) = start_connected(hi_scenario(), &["operator.admin"]).await;
    let expected = [
        ("exec.approval.list", json!({}), json!([])),
        ("question.list", json!({}), json!({"questions": []})),
        (
            "sessions.observer.visibility",
            json!({"visible": true}),
            json!({"ok": true}),
        ),
        (
            "users.prefs.get",
            json!({"keys": ["ui.theme"]}),
            json!({"status": "ok", "entries": {}}),
        ),
        (
            "controlUi.sessionPullRequests.subscribe",
            json!({"sessionKeys": []}),
            json!({"subscribed": false}),
        ),
        (
            "board.get",
            json!({"sessionKey": KEY}),
            json!({"sessionKey": KEY, "revision": 0, "tabs": [], "widgets": []}),
        ),
        (
            "sessions.viewers.set",
            json!({"sessionKeys": [KEY]}),
            json!({"sessionKeys": [KEY]}),
        ),
        (
            "sessions.groups.list",
            json!({}),
            json!({"groups": [], "sectionOrder": []}),
        ),
        (
            "sessions.groups.defaults",
            json!({}),
            json!({"defaults": []}),
        ),
        (
            "progressCard.get",
            json!({"sessionKey": KEY}),
            json!({"card": null}),
        ),
        (
            "taskSuggestions.list",
            json!({}),
            json!({"suggestions": []}),
        ),
        (
            "session.discussion.info",
            json!({"sessionKey": KEY}),
            json!({"state": "none"}),
        ),
        (
            "sessions.companion.state",
            json!({"sessionKey": KEY}),
            json!({"exchanges": []}),
        ),
        ("tasks.list", json!({}), json!({"tasks": []})),
        (
            "device.pair.list",
            json!({}),
            json!({"pending": [], "paired": []}),
        ),
        ("environments.list", json!({}), json!({"environments": []})),
        (
            "plugins.list",
            json!({}),
            json!({"plugins": [], "diagnostics": [], "mutationAllowed": false, "generation": 0}),
        ),
        (
            "sessions.github.options",
            json!({"sessionKey": KEY}),
            json!({"personal": {"state": "disconnected", "generation": null, "account": null,
                                "accessExpiresAtMs": null, "refreshState": "not_applicable",
                                "pending": null},
                   "shared": null, "pendingPersonal": null, "latestShared": null}),
        ),
        (
            "update.status",
            json!({}),
            json!({"sentinel": null, "updateAvailable": null, "effectiveChannel": "stable",
                   "schedule": {"channel": "stable", "autoEnabled": false, "install": {"kind": "package"}}}),
        ),
    ];
    for (method, params, answer) in expected {
        let res = client.ok(method, params).await;
        assert_eq!(res, answer, "{method}");
    }
    // Each still needs its scope: approvals need operator.approvals (or admin).
    let (mut reader, _) = Client::connect(&server.url, &["operator.read"]).await;
    let refused = reader.call("exec.approval.list", json!({})).await;
    assert_eq!(
        refused["error"]["details"]["missingScope"],
        "operator.approvals"
    );
    let unknown = reader.call("no.such.method", json!({})).await;
    assert_eq!(
        unknown["error"]["message"],
        "unknown method: no.such.method"
    );
}
