//! Agent resolution through `resolve_route`: binding scores (peer 8 > guild 4 > account 2 >
//! channel 1), ties, `/agent` prefixes, the default agent, and roles.

use std::collections::BTreeMap;

use pincer_config::{
    AgentEntry, Binding, BindingMatch, ChannelRoles, DmScope, PeerKind, PeerMatch, PincerConfig,
    RolesConfig, SessionConfig,
};
use pincer_turns::router::{
    ChatKind, MatchedBy, Route, RouteInput, SessionKind, ThreadRef, binding_score,
    default_agent_id, known_agent_ids, resolve_role, resolve_route,
};

fn agent(id: &str) -> AgentEntry {
    AgentEntry {
        id: id.to_string(),
        ..AgentEntry::default()
    }
}

fn bind(agent_id: &str, m: BindingMatch) -> Binding {
    Binding {
        agent_id: agent_id.to_string(),
        match_: m,
    }
}

fn on(channel: &str) -> BindingMatch {
    BindingMatch {
        channel: channel.to_string(),
        ..BindingMatch::default()
    }
}

/// A binding on `channel` for one account.
fn on_account(channel: &str, id: &str) -> BindingMatch {
    BindingMatch {
        account_id: Some(id.into()),
        ..on(channel)
    }
}

/// A binding on `channel` for one Discord guild.
fn on_guild(channel: &str, id: &str) -> BindingMatch {
    BindingMatch {
        guild_id: Some(id.into()),
        ..on(channel)
    }
}

/// A binding on `channel` for one Slack team.
fn on_team(channel: &str, id: &str) -> BindingMatch {
    BindingMatch {
        team_id: Some(id.into()),
        ..on(channel)
    }
}

/// A binding on `channel` for one peer.
fn on_peer(channel: &str, kind: PeerKind, id: &str) -> BindingMatch {
    BindingMatch {
        peer: peer(kind, id),
        ..on(channel)
    }
}

fn peer(kind: PeerKind, id: &str) -> Option<PeerMatch> {
    Some(PeerMatch {
        kind,
        id: id.to_string(),
    })
}

fn config(agents: &[&str], bindings: Vec<Binding>) -> PincerConfig {
    let mut cfg = PincerConfig::default();
    cfg.agents.list = agents.iter().map(|id| agent(id)).collect();
    cfg.bindings = bindings;
    cfg
}

fn dm(channel: &str, sender: &str, text: &str) -> RouteInput {
    RouteInput {
        channel: channel.to_string(),
        chat_kind: ChatKind::Direct,
        peer_id: sender.to_string(),
        text: text.to_string(),
        ..RouteInput::default()
    }
}

fn group(channel: &str, kind: ChatKind, id: &str) -> RouteInput {
    RouteInput {
        channel: channel.to_string(),
        chat_kind: kind,
        peer_id: id.to_string(),
        text: "hi".to_string(),
        ..RouteInput::default()
    }
}

/// The (agent, matched_by) pair a route chose.
fn chosen(cfg: &PincerConfig, input: &RouteInput) -> (String, MatchedBy) {
    let route = resolve_route(cfg, input);
    (route.agent_id, route.matched_by)
}

/// Asserts that `input` is routed by binding `index` of `cfg`, to `agent`.
fn assert_bound(cfg: &PincerConfig, input: &RouteInput, agent: &str, index: usize) {
    assert_eq!(
        chosen(cfg, input),
        (agent.to_string(), MatchedBy::Binding { index }),
        "{input:?}"
    );
}

#[test]
fn each_binding_field_scores_its_weight() {
    let input = RouteInput {
        account_id: Some("bot1".into()),
        guild_id: Some("g1".into()),
        team_id: Some("t1".into()),
        ..group("discord", ChatKind::Channel, "c1")
    };
    let cases = [
        (on("discord"), Some(1)),
        (on(" Discord "), Some(1)),
        (on_account("discord", "Bot1"), Some(3)),
        (on_account("discord", "*"), Some(1)),
        (on_guild("discord", "g1"), Some(5)),
        (on_team("discord", "t1"), Some(5)),
        (on_peer("discord", PeerKind::Channel, "c1"), Some(9)),
        // A group peer binding matches a channel chat (OpenClaw treats them as one).
        (on_peer("discord", PeerKind::Group, "c1"), Some(9)),
        (
            BindingMatch {
                account_id: Some("bot1".into()),
                guild_id: Some("g1".into()),
                peer: peer(PeerKind::Channel, "c1"),
                ..on("discord")
            },
            Some(15),
        ),
        // Every given field must match.
        (on("telegram"), None),
        (on(""), None),
        (on_account("discord", "bot2"), None),
        (on_guild("discord", "g2"), None),
        (on_peer("discord", PeerKind::Direct, "c1"), None),
        // Peer ids compare exactly.
        (on_peer("discord", PeerKind::Channel, "C1"), None),
    ];
    for (m, expected) in cases {
        assert_eq!(binding_score(&m, &input), expected, "{m:?}");
    }
}

#[test]
fn a_binding_without_account_matches_any_account_and_a_named_one_needs_the_default() {
    let no_account = dm("telegram", "1", "hi");
    let named_default = on_account("telegram", "default");
    assert_eq!(binding_score(&on("telegram"), &no_account), Some(1));
    assert_eq!(binding_score(&named_default, &no_account), Some(3));
    let bot2 = RouteInput {
        account_id: Some("bot2".into()),
        ..no_account
    };
    assert_eq!(binding_score(&on("telegram"), &bot2), Some(1));
    assert_eq!(binding_score(&named_default, &bot2), None);
}

#[test]
fn the_most_specific_binding_wins_whatever_its_position() {
    let cfg = config(
        &["chan", "acct", "guild", "peer"],
        vec![
            bind("chan", on("discord")),
            bind("acct", on_account("discord", "bot1")),
            bind("peer", on_peer("discord", PeerKind::Channel, "c1")),
            bind("guild", on_guild("discord", "g1")),
        ],
    );
    let base = RouteInput {
        account_id: Some("bot1".into()),
        guild_id: Some("g1".into()),
        ..group("discord", ChatKind::Channel, "c1")
    };
    let cases = [
        (base.clone(), "peer", 2),
        (
            RouteInput {
                peer_id: "c2".into(),
                ..base.clone()
            },
            "guild",
            3,
        ),
        (
            RouteInput {
                peer_id: "c2".into(),
                guild_id: Some("g2".into()),
                ..base.clone()
            },
            "acct",
            1,
        ),
        (
            RouteInput {
                peer_id: "c2".into(),
                guild_id: None,
                account_id: None,
                ..base.clone()
            },
            "chan",
            0,
        ),
    ];
    for (input, agent, index) in cases {
        assert_bound(&cfg, &input, agent, index);
    }
}

#[test]
fn of_two_matching_bindings_the_higher_score_wins_and_a_tie_goes_to_the_first() {
    let discord_c1 = group("discord", ChatKind::Channel, "c1");
    let cases = [
        // account 2 + guild 4 + channel 1 = 7 < peer 8 + channel 1 = 9.
        (
            [
                bind(
                    "combo",
                    BindingMatch {
                        account_id: Some("bot1".into()),
                        guild_id: Some("g1".into()),
                        ..on("discord")
                    },
                ),
                bind("peer", on_peer("discord", PeerKind::Channel, "c1")),
            ],
            RouteInput {
                account_id: Some("bot1".into()),
                guild_id: Some("g1".into()),
                ..discord_c1.clone()
            },
            "peer",
            1,
        ),
        // Ties go to the first binding in config order.
        (
            [
                bind("first", on_guild("discord", "g1")),
                bind("second", on_team("discord", "t1")),
            ],
            RouteInput {
                guild_id: Some("g1".into()),
                team_id: Some("t1".into()),
                ..discord_c1.clone()
            },
            "first",
            0,
        ),
    ];
    for (bindings, input, agent, index) in cases {
        let agents: Vec<String> = bindings.iter().map(|b| b.agent_id.clone()).collect();
        let agents: Vec<&str> = agents.iter().map(String::as_str).collect();
        let cfg = config(&agents, bindings.into());
        assert_bound(&cfg, &input, agent, index);
    }
}

#[test]
fn slack_team_and_direct_peer_bindings() {
    let cfg = config(
        &["work", "boss"],
        vec![
            bind("work", on_team("slack", "T01")),
            bind("boss", on_peer("slack", PeerKind::Direct, "U42")),
        ],
    );
    let in_team = RouteInput {
        team_id: Some("T01".into()),
        ..dm("slack", "U7", "hello")
    };
    assert_bound(&cfg, &in_team, "work", 0);
    let boss = RouteInput {
        team_id: Some("T01".into()),
        ..dm("slack", "U42", "hello")
    };
    assert_bound(&cfg, &boss, "boss", 1);
    // A direct peer binding never matches a group with the same id.
    assert_eq!(
        chosen(&cfg, &group("slack", ChatKind::Group, "U42")),
        ("main".into(), MatchedBy::Default)
    );
}

#[test]
fn bindings_to_unknown_agents_are_skipped() {
    let cfg = config(
        &["work"],
        vec![
            bind("ghost", on_peer("telegram", PeerKind::Direct, "1")),
            bind("work", on("telegram")),
        ],
    );
    assert_eq!(
        chosen(&cfg, &dm("telegram", "1", "hi")),
        ("work".into(), MatchedBy::Binding { index: 1 })
    );
    // `main` always exists, listed or not.
    let cfg = config(&[], vec![bind("Main", on("telegram"))]);
    assert_eq!(
        chosen(&cfg, &dm("telegram", "1", "hi")),
        ("main".into(), MatchedBy::Binding { index: 0 })
    );
}

#[test]
fn a_prefix_names_the_agent_only_when_no_binding_matched_and_the_agent_exists() {
    let cfg = config(&["work", "home"], vec![bind("home", on("discord"))]);
    let cases = [
        (
            "/work fix the build",
            "work",
            MatchedBy::Prefix,
            "fix the build",
        ),
        (
            "/Work   spaced  out  ",
            "work",
            MatchedBy::Prefix,
            "spaced  out",
        ),
        ("/work\nnext line", "work", MatchedBy::Prefix, "next line"),
        ("/work", "work", MatchedBy::Prefix, ""),
        ("/main hi", "main", MatchedBy::Prefix, "hi"),
        ("/ghost hi", "main", MatchedBy::Default, "/ghost hi"),
        ("/workshop hi", "main", MatchedBy::Default, "/workshop hi"),
        ("/work: hi", "main", MatchedBy::Default, "/work: hi"),
        (
            "please /work hi",
            "main",
            MatchedBy::Default,
            "please /work hi",
        ),
        ("/ hi", "main", MatchedBy::Default, "/ hi"),
    ];
    for (text, agent, matched_by, rest) in cases {
        let route = resolve_route(&cfg, &dm("telegram", "1", text));
        assert_eq!(
            (
                route.agent_id.as_str(),
                route.matched_by,
                route.text.as_str()
            ),
            (agent, matched_by, rest),
            "{text:?}"
        );
    }
    // A binding outranks a prefix, and the text is left as it was.
    let bound = RouteInput {
        text: "/work do it".into(),
        ..group("discord", ChatKind::Channel, "c1")
    };
    let route = resolve_route(&cfg, &bound);
    assert_eq!(
        (
            route.agent_id.as_str(),
            route.matched_by,
            route.text.as_str()
        ),
        ("home", MatchedBy::Binding { index: 0 }, "/work do it")
    );
}

#[test]
fn the_default_agent_is_the_marked_one_else_main() {
    let cfg = config(&["a", "b"], vec![]);
    assert_eq!(default_agent_id(&cfg), "main");
    assert_eq!(known_agent_ids(&cfg), ["main", "a", "b"]);
    let mut cfg = config(&["a", "b"], vec![]);
    cfg.agents.list[1].default = true;
    assert_eq!(default_agent_id(&cfg), "b");
    let route = resolve_route(&cfg, &dm("cli", "me", "hello"));
    assert_eq!(
        route,
        Route {
            agent_id: "b".into(),
            channel: "cli".into(),
            account_id: "default".into(),
            session_key: "agent:b:main".into(),
            main_session_key: "agent:b:main".into(),
            session_kind: SessionKind::Main,
            text: "hello".into(),
            matched_by: MatchedBy::Default,
            role: "default".into(),
        }
    );
}

#[test]
fn routes_carry_session_keys_for_the_chosen_agent() {
    let mut cfg = config(&["work"], vec![bind("work", on("telegram"))]);
    cfg.session = SessionConfig {
        dm_scope: DmScope::PerChannelPeer,
        ..SessionConfig::default()
    };
    let route = resolve_route(&cfg, &dm("Telegram", "ABC", "hi"));
    assert_eq!(route.session_key, "agent:work:telegram:direct:abc");
    assert_eq!(route.main_session_key, "agent:work:main");
    assert_eq!(route.session_kind, SessionKind::Direct);
    assert_eq!(route.channel, "telegram");

    let topic = RouteInput {
        thread: Some(ThreadRef::Topic("12".into())),
        ..group("telegram", ChatKind::Group, "-100777")
    };
    let route = resolve_route(&cfg, &topic);
    assert_eq!(
        route.session_key,
        "agent:work:telegram:group:-100777:topic:12"
    );
    assert_eq!(route.session_kind, SessionKind::Group);
}

#[test]
fn roles_resolve_from_the_most_specific_entry() {
    let mut channels = BTreeMap::new();
    channels.insert(
        "discord".to_string(),
        ChannelRoles {
            role: Some("discord-role".into()),
            groups: BTreeMap::from([
                ("g1".to_string(), "guild-role".to_string()),
                ("c9".to_string(), "channel-role".to_string()),
            ]),
        },
    );
    channels.insert(
        "telegram".to_string(),
        ChannelRoles {
            role: None,
            groups: BTreeMap::from([("-100".to_string(), "tg-group-role".to_string())]),
        },
    );
    channels.insert(
        "slack".to_string(),
        ChannelRoles {
            role: None,
            groups: BTreeMap::from([("T1".to_string(), "team-role".to_string())]),
        },
    );
    let roles = RolesConfig {
        default: Some("fallback".into()),
        channels,
        ..RolesConfig::default()
    };
    let in_guild = |chat: &str| RouteInput {
        guild_id: Some("g1".into()),
        ..group("discord", ChatKind::Channel, chat)
    };
    let cases = [
        (in_guild("c9"), "channel-role"),
        (in_guild("c1"), "guild-role"),
        (group("discord", ChatKind::Channel, "c1"), "discord-role"),
        (dm("Discord", "u1", "hi"), "discord-role"),
        (group("telegram", ChatKind::Group, "-100"), "tg-group-role"),
        (group("telegram", ChatKind::Group, "-200"), "fallback"),
        // A DM whose sender id equals a group id is not that group.
        (dm("telegram", "-100", "hi"), "fallback"),
        (
            RouteInput {
                team_id: Some("T1".into()),
                ..dm("slack", "u1", "hi")
            },
            "team-role",
        ),
        (dm("feishu", "u1", "hi"), "fallback"),
    ];
    for (input, expected) in cases {
        assert_eq!(resolve_role(&roles, &input), expected, "{input:?}");
    }
    assert_eq!(
        resolve_role(&RolesConfig::default(), &dm("telegram", "1", "hi")),
        "default"
    );
}
