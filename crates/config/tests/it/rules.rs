//! The cross-field rules checked after typed loading, each with its key path and line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_ai::env::MapEnv;
use pincer_config::*;

use crate::common::{assert_refusal_mentions, error_of};

fn accepts(text: &str) {
    if let Err(e) = parse_str(text, "pincer.json5", &MapEnv::default()) {
        panic!("{text} was refused: {e}");
    }
}

#[test]
fn agent_ids_follow_the_pattern() {
    accepts("{agents: {list: [{id: 'a'}, {id: '0-x_y'}, {id: 'main'}]}}");
    accepts(&format!(
        "{{agents: {{list: [{{id: 'a{}'}}]}}}}",
        "b".repeat(63)
    ));
    assert_eq!(
        error_of("{agents: {list: [\n  {id: 'Ops'},\n  {id: '-x'},\n  {id: ''},\n]}}"),
        "pincer.json5:2:4: agents.list[0].id: invalid agent id \"Ops\": use 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit\n\
         pincer.json5:3:4: agents.list[1].id: invalid agent id \"-x\": use 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit\n\
         pincer.json5:4:4: agents.list[2].id: invalid agent id \"\": use 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit"
    );
    let long = "a".repeat(65);
    assert_eq!(
        error_of(&format!("{{agents: {{list: [{{id: '{long}'}}]}}}}")),
        format!(
            "pincer.json5:1:19: agents.list[0].id: invalid agent id \"{long}\": use 1 to 64 of a-z, 0-9, _ and -, starting with a letter or digit"
        )
    );
    assert!(is_valid_agent_id("main"));
    assert!(!is_valid_agent_id("a.b"));
}

#[test]
fn agent_ids_are_unique() {
    assert_eq!(
        error_of("{agents: {list: [\n  {id: 'ops'},\n  {id: 'dev'},\n  {id: 'ops'},\n]}}"),
        "pincer.json5:4:4: agents.list[2].id: duplicate agent id \"ops\" (also agents.list[0])"
    );
}

#[test]
fn at_most_one_agent_is_the_default() {
    accepts("{agents: {list: [{id: 'a', default: true}, {id: 'b', default: false}]}}");
    assert_eq!(
        error_of(
            "{agents: {list: [\n  {id: 'a', default: true},\n  {id: 'b', default: true},\n]}}"
        ),
        "pincer.json5:3:13: agents.list[1].default: only one agent can be the default; agents.list[0] already is"
    );
}

#[test]
fn bindings_name_main_or_a_listed_agent() {
    accepts("{bindings: [{agentId: 'main', match: {channel: 'telegram'}}]}");
    accepts(
        "{agents: {list: [{id: 'ops'}]}, bindings: [{agentId: 'ops', match: {channel: 'telegram'}}]}",
    );
    assert_eq!(
        error_of(
            "{\n  agents: {list: [{id: 'ops'}, {id: 'dev'}]},\n  bindings: [\n    {agentId: 'opps', match: {channel: 'telegram'}},\n  ],\n}"
        ),
        "pincer.json5:4:6: bindings[0].agentId: unknown agent \"opps\" (known agents: main, dev, ops)"
    );
}

#[test]
fn model_references_are_provider_slash_model() {
    accepts(
        "{agents: {defaults: {model: 'openrouter/meta/llama-4'}, list: [{id: 'a', model: {primary: 'a/b', fallbacks: ['c/d']}}]}}",
    );
    assert_eq!(
        error_of("{agents: {defaults: {model: 'gpt-5'}}}"),
        "pincer.json5:1:22: agents.defaults.model: invalid model reference \"gpt-5\": expected provider/model, like \"anthropic/claude-sonnet-4-5\""
    );
    assert_eq!(
        error_of(
            "{agents: {defaults: {model: {\n  primary: '/m',\n  fallbacks: ['a/b', 'p/'],\n}}}}"
        ),
        "pincer.json5:2:3: agents.defaults.model.primary: invalid model reference \"/m\": expected provider/model, like \"anthropic/claude-sonnet-4-5\"\n\
         pincer.json5:3:22: agents.defaults.model.fallbacks[1]: invalid model reference \"p/\": expected provider/model, like \"anthropic/claude-sonnet-4-5\""
    );
    assert_eq!(
        error_of("{agents: {list: [{id: 'a',\n  model: ''}]}}"),
        "pincer.json5:2:3: agents.list[0].model: invalid model reference \"\": expected provider/model, like \"anthropic/claude-sonnet-4-5\""
    );
}

#[test]
fn identity_links_are_channel_colon_id() {
    accepts("{session: {identityLinks: {alice: ['telegram:1', 'discord:2:3']}}}");
    assert_eq!(
        error_of(
            "{session: {identityLinks: {\n  alice: ['telegram:1', 'discord'],\n  'bob.b': [':9'],\n}}}"
        ),
        "pincer.json5:2:25: session.identityLinks.alice[1]: invalid identity link \"discord\": expected channel:id, like \"telegram:123\"\n\
         pincer.json5:3:13: session.identityLinks[\"bob.b\"][0]: invalid identity link \":9\": expected channel:id, like \"telegram:123\""
    );
}

#[test]
fn the_main_key_is_non_empty_without_colons() {
    accepts("{session: {mainKey: 'home'}}");
    assert_eq!(
        error_of("{session: {mainKey: ''}}"),
        "pincer.json5:1:12: session.mainKey: must not be empty"
    );
    assert_eq!(
        error_of("{session: {mainKey: 'a:b'}}"),
        "pincer.json5:1:12: session.mainKey: \"a:b\" must not contain ':' (it is the last part of a session key)"
    );
}

#[test]
fn cooldowns_are_non_empty_when_given() {
    accepts("{auth: {cooldownsMs: [1000]}}");
    assert_eq!(
        error_of("{auth: {cooldownsMs: []}}"),
        "pincer.json5:1:9: auth.cooldownsMs: must list at least one cooldown (leave it out for the defaults)"
    );
}

#[test]
fn prune_after_is_a_duration() {
    accepts("{session: {maintenance: {pruneAfter: '30d', maxEntries: 10, mode: 'enforce'}}}");
    assert_eq!(
        error_of("{session: {maintenance: {pruneAfter: 'whenever'}}}"),
        "pincer.json5:1:26: session.maintenance.pruneAfter: duration \"whenever\" does not start with a number; expected a whole number and a unit: ms, s, m, h, d or w (e.g. 30d, 12h, 90m, 45s, 500ms, 2w)"
    );
}

#[test]
fn agent_runner_section() {
    accepts(
        "{agent: {runner: 'rpc', pool: {min: 0, max: 8, idleTimeoutMs: 1000}, workerCommand: ['pi', '--mode', 'rpc']}}",
    );
    accepts("{agent: {runner: 'embedded'}}");
    let config = parse_str(
        "{agent: {runner: 'rpc', pool: {max: 2}}}",
        "pincer.json5",
        &MapEnv::default(),
    )
    .unwrap()
    .config;
    assert_eq!(config.agent.runner, Some(RunnerKind::Rpc));
    assert_eq!(config.agent.pool.unwrap().max, Some(2));
    assert_eq!(
        error_of("{agent: {\n  pool: {min: 3, max: 2},\n}}"),
        "pincer.json5:2:10: agent.pool.min: must not be more than agent.pool.max (2)"
    );
    assert_eq!(
        error_of("{agent: {pool: {max: 0}}}"),
        "pincer.json5:1:17: agent.pool.max: must be at least 1"
    );
    assert_eq!(
        error_of("{agent: {workerCommand: []}}"),
        "pincer.json5:1:10: agent.workerCommand: needs a program, e.g. [\"pi\", \"--mode\", \"rpc\"]; leave it out for Pincer's own workers"
    );
    assert_refusal_mentions("{agent: {runner: 'docker'}}", &["agent.runner"]);
}

#[test]
fn channels_section() {
    accepts(
        "{channels: {telegram: {botToken: 'x', apiBaseUrl: 'http://127.0.0.1:1', dmPolicy: 'allowlist', \
         allowFrom: ['1', '@me'], groupPolicy: 'open', groups: {'*': {requireMention: false}}, \
         accounts: {work: {botToken: 'y', dmPolicy: 'open', allowFrom: ['*']}}}, \
         pairingNotify: {channel: 'telegram', to: '1'}}}",
    );
    assert_eq!(
        error_of("{channels: {telegram: {\n  dmPolicy: 'open', allowFrom: ['1'],\n}}}"),
        "pincer.json5:2:3: channels.telegram.dmPolicy: \"open\" lets anyone talk to the agent: add \"*\" to allowFrom to confirm, or use \"pairing\""
    );
    assert_refusal_mentions(
        "{channels: {telegram: {accounts: {a: {accounts: {b: {}}}}}}}",
        &["channels.telegram.accounts.a.accounts: accounts do not nest"],
    );
    assert_refusal_mentions(
        "{channels: {telegram: {bot_token: 'x'}}}",
        &["did you mean `botToken`"],
    );
}

#[test]
fn slack_and_feishu_sections() {
    accepts(
        "{channels: {slack: {botToken: 'xoxb-1', appToken: 'xapp-1', apiBaseUrl: 'http://127.0.0.1:1/api', \
         dmPolicy: 'allowlist', allowFrom: ['U1'], groupAllowFrom: ['C1', 'T1'], groups: {C1: {requireMention: false}}}, \
         feishu: {appId: 'cli_a', appSecret: 's', domain: 'lark', connectionMode: 'webhook', webhookPort: 3001, \
         webhookPath: '/lark', verificationToken: 'v', encryptKey: 'k', allowFrom: ['ou_1'], \
         accounts: {cn: {appId: 'cli_b', appSecret: 't', domain: 'https://open.feishu.cn', verificationToken: 'w'}}}}}",
    );
    assert_eq!(
        error_of("{channels: {feishu: {appId: 'a', appSecret: 'b',\n connectionMode: 'webhook'}}}"),
        "pincer.json5:2:2: channels.feishu.connectionMode: \"webhook\" needs verificationToken (and best encryptKey) from the app's \"Events & Callbacks\" page, so forged events are refused"
    );
    // An account does not inherit the channel's verification token: it is another app's.
    assert_refusal_mentions(
        "{channels: {feishu: {connectionMode: 'webhook', verificationToken: 'v', accounts: {b: {appId: 'x'}}}}}",
        &["channels.feishu.accounts.b.connectionMode: \"webhook\" needs"],
    );
    assert_refusal_mentions(
        "{channels: {feishu: {domain: 'open.feishu.cn'}}}",
        &[
            "channels.feishu.domain: \"open.feishu.cn\" is not a domain: use \"feishu\", \"lark\" or an http(s) base URL",
        ],
    );
    assert_refusal_mentions(
        "{channels: {feishu: {webhookPath: 'events'}}}",
        &["channels.feishu.webhookPath: must start with \"/\""],
    );
    assert_eq!(
        error_of("{channels: {slack: {dmPolicy: 'open'}}}"),
        "pincer.json5:1:21: channels.slack.dmPolicy: \"open\" lets anyone talk to the agent: add \"*\" to allowFrom to confirm, or use \"pairing\""
    );
}

#[test]
fn accounts_take_the_channels_fields_but_not_its_credentials() {
    use pincer_config::{SlackConfig, enabled_accounts};
    let slack: SlackConfig = serde_json::from_value(serde_json::json!({
        "botToken": "xoxb-main", "appToken": "xapp-main", "apiBaseUrl": "http://x/api",
        "allowFrom": ["U1"], "groups": {"C1": {"requireMention": false}},
        "accounts": {
            "work": {"botToken": "xoxb-work", "groups": {"C2": {}}},
            "off": {"botToken": "xoxb-off", "enabled": false}
        }
    }))
    .unwrap();
    let accounts = enabled_accounts(&slack);
    let ids: Vec<Option<&str>> = accounts.iter().map(|(id, _)| id.as_deref()).collect();
    assert_eq!(ids, [None, Some("work")]);
    let work = &accounts[1].1;
    assert_eq!(
        work.bot_token.as_ref().map(pincer_base::Secret::expose),
        Some("xoxb-work")
    );
    assert_eq!(work.app_token, None, "credentials are never inherited");
    assert_eq!(work.api_base_url.as_deref(), Some("http://x/api"));
    assert_eq!(work.allow_from, Some(vec!["U1".to_owned()]));
    assert_eq!(
        work.groups.keys().collect::<Vec<_>>(),
        ["C1", "C2"],
        "groups are merged by id"
    );
    assert!(work.accounts.is_empty());
}

#[test]
fn memory_search_section() {
    accepts(
        "{agents: {defaults: {memorySearch: {provider: 'openai', model: 'text-embedding-3-small', \
         remote: {baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'k'}, chunking: {tokens: 400, overlap: 80}, \
         query: {maxResults: 6, minScore: 0.35, hybrid: {vectorWeight: 0.7, textWeight: 0.3, candidateMultiplier: 4, \
         mmr: {enabled: true, lambda: 0.7}, temporalDecay: {enabled: true, halfLifeDays: 30}}}, \
         sync: {watch: true, watchDebounceMs: 1500}}}, \
         list: [{id: 'work', memorySearch: {provider: 'local', local: {modelPath: '/models/potion'}}}]}}",
    );
    accepts(
        "{agents: {defaults: {compaction: {enabled: true, reserveTokens: 8000, keepRecentTokens: 4000, \
         memoryFlush: {enabled: true, softThresholdTokens: 2000}}}}}",
    );
    assert_refusal_mentions(
        "{agents: {defaults: {compaction: {reserve: 1}}}}",
        &["agents.defaults.compaction.reserve"],
    );
    assert_eq!(
        error_of("{agents: {defaults: {memorySearch: {chunking: {tokens: 100, overlap: 100}}}}}"),
        "pincer.json5:1:61: agents.defaults.memorySearch.chunking.overlap: must be less than the chunk size (100 tokens)"
    );
    assert_refusal_mentions(
        "{agents: {list: [{id: 'a', memorySearch: {provider: 'local'}}]}}",
        &["agents.list[0].memorySearch.provider: \"local\" needs local.modelPath"],
    );
    let weight =
        error_of("{agents: {defaults: {memorySearch: {query: {hybrid: {vectorWeight: 2}}}}}}");
    assert!(
        weight.contains("memorySearch.query.hybrid.vectorWeight: must be between 0 and 1"),
        "{weight}"
    );
}

#[test]
fn an_agents_memory_search_wins_field_by_field() {
    use pincer_config::{MemoryProviderName, MemorySearchConfig};
    let defaults: MemorySearchConfig = serde_json::from_value(serde_json::json!({
        "provider": "openai", "model": "m1",
        "query": {"maxResults": 3, "hybrid": {"vectorWeight": 0.6}}
    }))
    .unwrap();
    let own: MemorySearchConfig = serde_json::from_value(serde_json::json!({
        "model": "m2", "query": {"hybrid": {"textWeight": 0.4}}
    }))
    .unwrap();
    let merged = MemorySearchConfig::merged(Some(&defaults), Some(&own));
    assert_eq!(merged.provider, Some(MemoryProviderName::Openai));
    assert_eq!(merged.model.as_deref(), Some("m2"));
    let query = merged.query.unwrap();
    assert_eq!(query.max_results, Some(3));
    let hybrid = query.hybrid.unwrap();
    assert_eq!(hybrid.vector_weight, Some(0.6));
    assert_eq!(hybrid.text_weight, Some(0.4));
    assert_eq!(
        MemorySearchConfig::merged(None, None),
        MemorySearchConfig::default()
    );
}
