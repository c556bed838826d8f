//! Answers for what OpenClaw has and Pincer does not: plugins, plugin approvals, questions, boards,
//! projects, GitHub links, voice, session groups and members, mentions, tasks, paired nodes
//! and devices, remote environments, artifacts, the usage history, the skill library.
//! OpenClaw's own clients (the Control UI, the TUI) call these while they load and treat
//! an error as a broken gateway, so each answers OpenClaw's shape for "nothing here"
//! (recorded in `reference/openclaw-clients-wire.md`, or from the real gateway where the
//! recording has none) instead of "unknown method". Params are not read, except the few an
//! answer echoes (`sessionKey`, `sessionKeys`, `surface`, the usage dates). Each method is
//! still in the method table, so its scope is checked first.

use serde_json::{Value, json};

use super::Method;

/// The gateway owner as OpenClaw's session-member answers name it.
fn owner() -> Value {
    json!({"type": "human", "id": "gateway-owner", "identity": {"type": "profile", "id": "gateway-owner"}})
}

/// A string param echoed back (`null` when absent).
fn echo(p: &Value, name: &str) -> Value {
    p.get(name)
        .filter(|v| v.is_string())
        .cloned()
        .unwrap_or(Value::Null)
}

/// Makes a method's answer from the request's params.
type Answer = fn(&Value) -> Value;

/// Method → its answer.
const ABSENT: &[(Method, Answer)] = &[
    (
        Method::PluginsControlUiList,
        |_| json!({"revision": "0", "plugins": [], "diagnostics": []}),
    ),
    (
        Method::PluginSurfaceRefresh,
        |p| json!({"surface": echo(p, "surface"), "pluginSurfaceUrls": {}}),
    ),
    (Method::PluginApprovalList, |_| json!([])),
    (Method::OpenclawApprovalList, |_| json!([])),
    (Method::QuestionList, |_| json!({"questions": []})),
    (Method::SessionsObserverVisibility, |_| json!({"ok": true})),
    (
        Method::UsersPrefsGet,
        |_| json!({"status": "ok", "entries": {}}),
    ),
    (
        Method::ControlUiSessionPullRequestsSubscribe,
        |_| json!({"subscribed": false}),
    ),
    (
        Method::BoardGet,
        |p| json!({"sessionKey": echo(p, "sessionKey"), "revision": 0, "tabs": [], "widgets": []}),
    ),
    (
        Method::ProjectsList,
        |_| json!({"projects": [], "recents": []}),
    ),
    (Method::SessionsViewersSet, |p| {
        let keys = p
            .get("sessionKeys")
            .filter(|v| v.is_array())
            .cloned()
            .unwrap_or_else(|| json!([]));
        json!({ "sessionKeys": keys })
    }),
    (Method::SessionsGithubOptions, |_| {
        json!({
            "personal": {
                "state": "disconnected", "generation": null, "account": null,
                "accessExpiresAtMs": null, "refreshState": "not_applicable", "pending": null,
            },
            "shared": null, "pendingPersonal": null, "latestShared": null,
        })
    }),
    (Method::TalkCatalog, |_| {
        json!({
            "modes": [], "transports": [], "brains": [],
            "speech": {"providers": []},
            "transcription": {"ready": false, "providers": []},
            "realtime": {"ready": false, "providers": []},
        })
    }),
    (Method::SessionMembersListEvidence, |p| {
        json!({
            "sessionKey": echo(p, "sessionKey"), "owner": owner(), "members": [],
            "identities": [], "role": "admin", "allowedVisibilities": ["shared"],
        })
    }),
    (
        Method::SessionsGroupsList,
        |_| json!({"groups": [], "sectionOrder": []}),
    ),
    (Method::SessionsGroupsDefaults, |_| json!({"defaults": []})),
    (
        Method::MentionsList,
        |_| json!({"gatewayInstanceId": "pincer", "revision": 0, "items": []}),
    ),
    (Method::ProgressCardGet, |_| json!({"card": null})),
    (Method::TaskSuggestionsList, |_| json!({"suggestions": []})),
    (Method::SessionsBranchesList, |_| json!({"branches": []})),
    (Method::SessionDiscussionInfo, |_| json!({"state": "none"})),
    (Method::SessionsCompanionState, |_| json!({"exchanges": []})),
    (Method::TasksList, |_| json!({"tasks": []})),
    (Method::SessionsCatalogList, |_| json!({"catalogs": []})),
    (
        Method::NodeList,
        |_| json!({"ts": pincer_ai::now_ms(), "nodes": []}),
    ),
    (
        Method::DevicePairList,
        |_| json!({"pending": [], "paired": []}),
    ),
    (Method::EnvironmentsList, |_| json!({"environments": []})),
    (
        Method::PluginsList,
        |_| json!({"plugins": [], "diagnostics": [], "mutationAllowed": false, "generation": 0}),
    ),
    (Method::PluginsCatalogBrowse, |_| json!({"items": []})),
    (Method::ArtifactsList, |_| json!({"artifacts": []})),
    (
        Method::DiagnosticsLanes,
        |_| json!({"ts": pincer_ai::now_ms(), "lanes": [], "dynamic": null}),
    ),
    (Method::SessionsUsage, |p| {
        json!({
            "updatedAt": pincer_ai::now_ms(),
            "startDate": echo(p, "startDate"), "endDate": echo(p, "endDate"),
            "sessions": [],
            "totals": {
                "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "totalCost": 0, "inputCost": 0, "outputCost": 0, "cacheReadCost": 0,
                "cacheWriteCost": 0, "missingCostEntries": 0,
            },
            "aggregates": {
                "sessionCount": 0,
                "messages": {"total": 0, "user": 0, "assistant": 0, "toolCalls": 0,
                             "toolResults": 0, "errors": 0},
                "tools": {"totalCalls": 0, "uniqueTools": 0, "tools": []},
                "byModel": [], "byProvider": [], "byAgent": [], "byChannel": [],
                "byCreator": [], "costDaily": [], "dailyLatency": [], "modelDaily": [],
                "daily": [],
            },
            "creatorOptions": [],
        })
    }),
    (Method::SkillsLibraryList, |_| {
        json!({
            "entries": [], "profileId": null, "multipleProfiles": false,
            "defaultTarget": "unavailable", "canManageWorkspace": false,
            "defaultSelectionLimit": 64,
        })
    }),
    (Method::SkillsSearch, |_| json!({"results": []})),
];

/// The answer of `method`, if it is one of these.
pub(super) fn answer(method: Method, p: &Value) -> Option<Value> {
    ABSENT
        .iter()
        .find(|(m, _)| *m == method)
        .map(|(_, answer)| answer(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_answers_once_and_echoes_what_it_should() {
        for (i, (m, _)) in ABSENT.iter().enumerate() {
            assert!(
                ABSENT[i + 1..].iter().all(|(other, _)| other != m),
                "{m:?} twice"
            );
        }
        let board = answer(Method::BoardGet, &json!({"sessionKey": "agent:main:main"}));
        assert_eq!(board.unwrap()["sessionKey"], "agent:main:main");
        assert_eq!(answer(Method::Health, &json!({})), None);
    }
}
