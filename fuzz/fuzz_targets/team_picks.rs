//! Arbitrary text as what people type into the team's matchers: an `allow` pattern of
//! `tools.agentToAgent` / `subagents.allowAgents` against an agent id, and the `#n` / run id /
//! label `/subagents` picks a sub-agent by. Neither panics; a pick is one of the records.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_team::policy::glob_matches;
use pincer_team::subagents::control::pick;
use pincer_team::subagents::registry::{SpawnRecord, SpawnStatus};

fn record(n: usize) -> SpawnRecord {
    SpawnRecord {
        run_id: format!("subagent-{n}"),
        child_key: format!("agent:main:subagent:{n}"),
        agent_id: "main".into(),
        requester_key: "agent:main:main".into(),
        requester_agent: "main".into(),
        label: Some(format!("task {n}")),
        task: "t".into(),
        depth: 1,
        created_at: 0,
        started_at: None,
        ended_at: None,
        status: SpawnStatus::Running,
        result: None,
        delegated: false,
    }
}

fuzz_target!(|input: &str| {
    let (pattern, text) = input.split_once('\n').unwrap_or((input, "main"));
    let star_free = !pattern.contains('*');
    if glob_matches(pattern, text) && star_free {
        assert_eq!(pattern, text);
    }
    let records: Vec<SpawnRecord> = (0..3).map(record).collect();
    if let Ok(found) = pick(&records, input) {
        assert!(records.iter().any(|r| r.run_id == found.run_id));
    }
    assert!(pick(&[], input).is_err());
});
