//! What the chat-channel tests share: `pincer gateway run` with a channel pointed at a
//! fake platform and the mock LLM, and what the model was asked.

use pincer_testkit::MockLlm;
use serde_json::Value;

use super::Home;
use super::gateway::{Foreground, gateway_home_in, text_of};

/// The gateway's token in these tests.
pub const GATEWAY_TOKEN: &str = "channel-test-token";

/// A foreground gateway in a new home with no heartbeat whose `channels` section holds
/// `channels` (e.g. `slack: { botToken: "…" },`).
pub fn channel_gateway(llm: &MockLlm, channels: &str) -> (Home, Foreground) {
    channel_gateway_in(Home::new(), llm, "0m", channels)
}

/// [`channel_gateway`] in `home`, with a heartbeat every `every`.
pub fn channel_gateway_in(
    home: Home,
    llm: &MockLlm,
    every: &str,
    channels: &str,
) -> (Home, Foreground) {
    let (home, _port) = gateway_home_in(
        home,
        llm,
        GATEWAY_TOKEN,
        &format!("heartbeat: {{ every: \"{every}\" }}"),
        &format!("channels: {{ {channels} }},"),
    );
    let gateway = Foreground::start(&home, &["gateway", "run"]);
    (home, gateway)
}

/// The user messages of the model's last request.
pub fn last_request_users(llm: &MockLlm) -> Vec<Value> {
    let body = llm.requests().last().unwrap().body.clone();
    let messages = body["messages"].as_array().unwrap();
    messages
        .iter()
        .filter(|m| m["role"] == "user")
        .cloned()
        .collect()
}

/// The text of the last user message of the model's last request.
pub fn last_user_text(llm: &MockLlm) -> String {
    text_of(last_request_users(llm).last().unwrap())
}

/// "in the thread" draws "thread reply", "in the channel" draws "channel reply".
pub fn thread_and_channel_replies() -> pincer_testkit::Scenario {
    super::replies(&[
        ("in the thread", "thread reply"),
        ("in the channel", "channel reply"),
    ])
}

/// Model calls whose request mentions `text` anywhere.
pub fn model_calls_with(llm: &MockLlm, text: &str) -> usize {
    llm.requests()
        .iter()
        .filter(|r| r.body.to_string().contains(text))
        .count()
}

/// Model calls whose last user message is `text` (one per turn on it).
pub fn turns_on(llm: &MockLlm, text: &str) -> usize {
    llm.requests()
        .iter()
        .filter(|r| {
            let users: Vec<&Value> = r.body["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|m| m["role"] == "user")
                .collect();
            users.last().is_some_and(|m| text_of(m) == text)
        })
        .count()
}

/// The contents of the file a prompt's `[media attached: <path> (<type>)]` names, which
/// must have been moved into the inbox of `home`'s agent workspace (and be named relative
/// to the workspace).
pub fn attached_file(home: &Home, prompt: &str) -> Vec<u8> {
    let path = prompt
        .strip_prefix("[media attached: ")
        .and_then(|rest| rest.split(" (").next())
        .unwrap_or_else(|| panic!("{prompt}"));
    assert!(path.starts_with("inbox/"), "{path}");
    std::fs::read(home.path().join("agents/main/workspace").join(path)).unwrap()
}

/// The keys of the sessions index, sorted.
pub fn session_keys(home: &Home) -> Vec<String> {
    let text = std::fs::read_to_string(home.sessions_dir().join("sessions.json")).unwrap();
    let index: Value = serde_json::from_str(&text).unwrap();
    let mut keys: Vec<String> = index.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    keys
}
