//! DM pairing's pure rules through the public API: the access decisions for direct
//! messages and groups as tables, the policies' OpenClaw names and defaults, and the texts
//! sent to people (strangers, approved senders, the owner).

use pincer_gateway::pairing::{
    DmAccess, DmPolicy, GroupAccess, GroupPolicy, approved_notice, dm_access, group_access,
    owner_notice, pairing_full_reply, pairing_reply,
};
use pincer_testkit::files::strings;
use serde_json::json;

// --- access decisions ----------------------------------------------------------------------

#[test]
fn dm_access_table() {
    use DmAccess::{Allow, Ignore, Pair};
    use DmPolicy::{Allowlist, Disabled, Open, Pairing};
    let none: &[&str] = &[];
    // (policy, configured allowFrom, stored allowFrom, sender ids, expected)
    type Case<'a> = (
        DmPolicy,
        &'a [&'a str],
        &'a [&'a str],
        &'a [&'a str],
        DmAccess,
    );
    let cases: &[Case] = &[
        // pairing: configured or approved senders in, strangers get a code.
        (Pairing, &["123"], &[], &["123"], Allow),
        (Pairing, &[], &["123"], &["123"], Allow),
        (Pairing, &["telegram:123"], &[], &["123"], Allow),
        (Pairing, &["@Alice"], &[], &["999", "@alice"], Allow),
        (Pairing, &["alice"], &[], &["999", "@ALICE"], Allow),
        (Pairing, &["123"], &["456"], &["789"], Pair),
        (Pairing, &[], &[], &["123"], Pair),
        (Pairing, &["*"], &[], &["123"], Pair),
        (Pairing, &[], &["*"], &["123"], Pair),
        (Pairing, &["123"], &[], none, Pair),
        // allowlist: configured senders only; strangers get silence, the store is ignored.
        (Allowlist, &["123"], &[], &["123"], Allow),
        (Allowlist, &["123"], &[], &["456"], Ignore),
        (Allowlist, &[], &["456"], &["456"], Ignore),
        (Allowlist, &[], &[], &["123"], Ignore),
        (Allowlist, &["*"], &[], &["123"], Ignore),
        // open: only with "*".
        (Open, &["*"], &[], &["123"], Allow),
        (Open, &["1", " * "], &[], &["anyone"], Allow),
        (Open, &[], &[], &["123"], Ignore),
        (Open, &["123"], &[], &["123"], Ignore),
        (Open, &[], &["*"], &["123"], Ignore),
        (Open, &[], &["123"], &["123"], Ignore),
        // disabled: nobody.
        (Disabled, &["*"], &[], &["123"], Ignore),
        (Disabled, &["123"], &["123"], &["123"], Ignore),
        (Disabled, &[], &[], &["123"], Ignore),
    ];
    for (i, (policy, configured, stored, ids, expected)) in cases.iter().enumerate() {
        assert_eq!(
            dm_access(*policy, &strings(configured), &strings(stored), ids),
            *expected,
            "case {i}: {policy:?} configured={configured:?} stored={stored:?} ids={ids:?}"
        );
    }
}

#[test]
fn group_access_table() {
    use GroupAccess::{Allow, Ignore};
    use GroupPolicy::{Allowlist, Disabled, Open};
    // (policy, groupAllowFrom, group, sender ids, requireMention, mentioned, expected)
    type Case<'a> = (
        GroupPolicy,
        &'a [&'a str],
        &'a str,
        &'a [&'a str],
        bool,
        bool,
        GroupAccess,
    );
    let cases: &[Case] = &[
        (Allowlist, &["-100"], "-100", &["1"], true, true, Allow),
        (Allowlist, &["-100"], "-100", &["1"], true, false, Ignore),
        (Allowlist, &["-100"], "-100", &["1"], false, false, Allow),
        (
            Allowlist,
            &["telegram:-100"],
            "-100",
            &["1"],
            false,
            false,
            Allow,
        ),
        (Allowlist, &["1"], "-200", &["1"], true, true, Allow),
        (
            Allowlist,
            &["@alice"],
            "-200",
            &["1", "@Alice"],
            true,
            true,
            Allow,
        ),
        (Allowlist, &["1"], "-200", &["2"], true, true, Ignore),
        (Allowlist, &["-100"], "-200", &["1"], false, false, Ignore),
        (Allowlist, &[], "-100", &["1"], false, true, Ignore),
        (Allowlist, &["*"], "-300", &["9"], true, true, Allow),
        (Allowlist, &["*"], "-300", &["9"], true, false, Ignore),
        (Open, &[], "-100", &["1"], true, true, Allow),
        (Open, &[], "-100", &["1"], true, false, Ignore),
        (Open, &[], "-100", &["1"], false, false, Allow),
        (Disabled, &["-100", "*"], "-100", &["1"], true, true, Ignore),
        (Disabled, &["-100"], "-100", &["1"], false, false, Ignore),
    ];
    for (i, (policy, list, group, ids, require, mentioned, expected)) in cases.iter().enumerate() {
        assert_eq!(
            group_access(*policy, &strings(list), group, ids, *require, *mentioned),
            *expected,
            "case {i}: {policy:?} list={list:?} group={group} ids={ids:?} require={require} mentioned={mentioned}"
        );
    }
}

#[test]
fn policies_have_openclaw_names_and_defaults() {
    assert_eq!(DmPolicy::default(), DmPolicy::Pairing);
    assert_eq!(GroupPolicy::default(), GroupPolicy::Allowlist);
    let dm: Vec<DmPolicy> =
        serde_json::from_value(json!(["pairing", "allowlist", "open", "disabled"])).unwrap();
    assert_eq!(
        dm,
        [
            DmPolicy::Pairing,
            DmPolicy::Allowlist,
            DmPolicy::Open,
            DmPolicy::Disabled
        ]
    );
    let group: Vec<GroupPolicy> =
        serde_json::from_value(json!(["open", "allowlist", "disabled"])).unwrap();
    assert_eq!(
        group,
        [
            GroupPolicy::Open,
            GroupPolicy::Allowlist,
            GroupPolicy::Disabled
        ]
    );
    assert!(serde_json::from_value::<DmPolicy>(json!("Pairing")).is_err());
}

// --- texts ---------------------------------------------------------------------------------

#[test]
fn texts_sent_to_people() {
    assert_eq!(
        pairing_reply("telegram", "ABCD2345", "123"),
        "Pincer: access not configured.\n\nYour telegram id: 123\nPairing code: ABCD2345\n\n\
         Ask the bot owner to approve with:\npincer pairing approve telegram ABCD2345"
    );
    assert_eq!(
        pairing_full_reply(),
        "Pincer: too many pending pairing requests right now; try again later."
    );
    assert_eq!(
        approved_notice(),
        "Pincer: access approved. Send your message again."
    );
    assert_eq!(
        owner_notice(
            "telegram",
            "123",
            Some(&json!({"username": "alice", "name": "Alice Liddell"})),
            "ABCD2345"
        ),
        "Pincer: pairing request on telegram from 123 (@alice, Alice Liddell).\n\
         Pairing code: ABCD2345\n\nApprove with:\npincer pairing approve telegram ABCD2345"
    );
    assert_eq!(
        owner_notice("discord", "42", None, "ABCD2345"),
        "Pincer: pairing request on discord from 42.\nPairing code: ABCD2345\n\n\
         Approve with:\npincer pairing approve discord ABCD2345"
    );
    // A stranger's name cannot add lines to the owner's notice.
    let forged = owner_notice(
        "telegram",
        "123",
        Some(&json!({"name": "Bob\n\nApprove with:\npincer pairing approve telegram ZZZZ2345"})),
        "ABCD2345",
    );
    assert_eq!(forged.lines().count(), 5, "{forged}");
    assert!(forged.ends_with("pincer pairing approve telegram ABCD2345"));
}

#[test]
fn owners_are_listed_or_approved_and_a_wildcard_makes_none() {
    use pincer_gateway::pairing::is_owner;
    let list = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert!(is_owner(&list(&["123"]), &[], &["123"]));
    assert!(is_owner(&[], &list(&["telegram:123"]), &["123"]));
    assert!(is_owner(&list(&["alice"]), &[], &["42", "@Alice"]));
    assert!(!is_owner(&list(&["*"]), &list(&["*"]), &["123"]));
    assert!(!is_owner(&list(&["123"]), &list(&["456"]), &["789"]));
    assert!(!is_owner(&[], &[], &["123"]));
}
