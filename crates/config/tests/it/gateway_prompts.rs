//! `gatewayPrompts` on `agents.defaults` and on an `agents.list[]` entry: it parses, an
//! agent's value wins field by field, and a typo inside is refused with its line.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pincer_ai::env::MapEnv;
use pincer_config::*;

fn parse(text: &str) -> Result<PincerConfig, String> {
    parse_str(text, "pincer.json5", &MapEnv::default())
        .map(|parsed| parsed.config)
        .map_err(|e| e.to_string())
}

#[test]
fn gateway_prompts_parse_on_the_defaults_and_on_an_agent() {
    let config = parse(
        "{agents: {\n  defaults: {gatewayPrompts: {heartbeat: false, cron: true}},\n  \
         list: [{id: 'ops', gatewayPrompts: {cron: false, media: true}}],\n}}",
    )
    .unwrap();
    let defaults = config.agents.defaults.gateway_prompts.unwrap();
    assert_eq!(
        defaults,
        GatewayPromptsConfig {
            heartbeat: Some(false),
            cron: Some(true),
            media: None,
        }
    );
    let own = config.agents.list[0].gateway_prompts.unwrap();
    assert_eq!(
        own.or(defaults),
        GatewayPromptsConfig {
            heartbeat: Some(false),
            cron: Some(false),
            media: Some(true),
        }
    );
    // Nothing set is nothing forced.
    let empty = parse("{agents: {defaults: {gatewayPrompts: {}}}}").unwrap();
    assert_eq!(
        empty.agents.defaults.gateway_prompts,
        Some(GatewayPromptsConfig::default())
    );
    assert_eq!(parse("{}").unwrap().agents.defaults.gateway_prompts, None);
}

#[test]
fn an_unknown_key_inside_gateway_prompts_is_refused_with_its_line() {
    assert_eq!(
        parse("{agents: {\n  defaults: {\n    gatewayPrompts: {\n      heartbeet: true,\n    },\n  },\n}}")
            .unwrap_err(),
        "pincer.json5:4:7: agents.defaults.gatewayPrompts.heartbeet: unknown key, did you mean `heartbeat`?"
    );
    assert_eq!(
        parse("{agents: {list: [\n  {id: 'ops', gatewayPrompts: {\n    voice: true}},\n]}}")
            .unwrap_err(),
        "pincer.json5:3:5: agents.list[0].gatewayPrompts.voice: unknown key (known keys: heartbeat, cron, media)"
    );
    assert_eq!(
        parse("{agents: {defaults: {gatewayPrompts: {media: 'yes'}}}}").unwrap_err(),
        "pincer.json5:1:39: agents.defaults.gatewayPrompts.media: expected a boolean, found the string \"yes\""
    );
}
