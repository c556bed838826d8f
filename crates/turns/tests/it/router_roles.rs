//! `resolve_role_for_key`: the role of a session known only by its key (issue 22) is the
//! role of the chat the key names, else `roles.default`.

use std::collections::BTreeMap;

use pincer_config::{ChannelRoles, RolesConfig};
use pincer_turns::router::resolve_role_for_key;

fn roles() -> RolesConfig {
    RolesConfig {
        default: Some("fallback".into()),
        channels: BTreeMap::from([
            (
                "telegram".to_owned(),
                ChannelRoles {
                    role: Some("tg".into()),
                    groups: BTreeMap::from([("-100".to_owned(), "ops".to_owned())]),
                },
            ),
            (
                "discord".to_owned(),
                ChannelRoles {
                    role: None,
                    groups: BTreeMap::from([("c1".to_owned(), "mods".to_owned())]),
                },
            ),
        ]),
        ..RolesConfig::default()
    }
}

#[test]
fn a_key_names_its_chats_role() {
    let roles = roles();
    for (key, role) in [
        ("agent:main:telegram:group:-100", "ops"),
        ("agent:main:telegram:group:-100:topic:7", "ops"),
        ("agent:main:telegram:group:-200", "tg"),
        ("agent:main:telegram:direct:42", "tg"),
        ("agent:main:telegram:acct:direct:42", "tg"),
        ("agent:main:discord:channel:c1", "mods"),
        ("agent:main:discord:channel:c2", "fallback"),
        ("agent:main:main", "fallback"),
        ("agent:main:direct:42", "fallback"),
        ("cron:daily", "fallback"),
        ("agent:main:subagent:abc", "fallback"),
        ("not a key", "fallback"),
        ("", "fallback"),
    ] {
        assert_eq!(resolve_role_for_key(&roles, key), role, "{key}");
    }
    assert_eq!(
        resolve_role_for_key(&RolesConfig::default(), "agent:main:telegram:group:-100"),
        "default"
    );
}
