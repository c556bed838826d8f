//! Who gets a run's `agent` and `chat` events: a connection that named sessions
//! (`chat.history`, `chat.send`, `agent`) gets those sessions' runs only; one that named none
//! gets every run's, as OpenClaw's gateway sends them. Either way its `seq` has no gaps.

use super::*;

/// Every frame one connection was sent since `hello-ok`.
struct Seen {
    client: Client,
    frames: Vec<Value>,
}

impl Seen {
    async fn connect(url: &str) -> Self {
        let (client, hello) = Client::connect(url, &["operator.write"]).await;
        assert_eq!(hello["ok"], true, "{hello}");
        Self {
            client,
            frames: Vec::new(),
        }
    }

    /// Sends a request and keeps every frame until `stop`.
    async fn request(
        &mut self,
        id: &str,
        method: &str,
        params: Value,
        stop: impl Fn(&Value) -> bool,
    ) {
        self.client
            .send(json!({"type": "req", "id": id, "method": method, "params": params}))
            .await;
        let frames = self.client.until(stop).await;
        self.frames.extend(frames);
    }

    /// Keeps every frame until `stop`.
    async fn until(&mut self, stop: impl Fn(&Value) -> bool) {
        let frames = self.client.until(stop).await;
        self.frames.extend(frames);
    }

    /// `chat.send` of `ping` to `key` as `run_id`, until that run's `chat` final.
    async fn ping(&mut self, key: &str, run_id: &str) {
        let params = json!({"sessionKey": key, "message": "ping", "idempotencyKey": run_id});
        self.request(run_id, "chat.send", params, |f| is_final(f, run_id))
            .await;
    }

    /// The runs whose `agent` or `chat` events it was sent, in the order first seen.
    fn runs(&self) -> Vec<String> {
        let mut runs: Vec<String> = Vec::new();
        for f in &self.frames {
            if f["event"] == "agent" || f["event"] == "chat" {
                let run = f["payload"]["runId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                if !runs.contains(&run) {
                    runs.push(run);
                }
            }
        }
        runs
    }

    /// The `seq` of every event frame it was sent, which must count up by one.
    fn assert_seq_has_no_gaps(&self) {
        let seqs: Vec<u64> = self
            .frames
            .iter()
            .filter(|f| f["type"] == "event")
            .filter_map(|f| f["seq"].as_u64())
            .collect();
        assert!(!seqs.is_empty());
        let expected: Vec<u64> = (seqs[0]..seqs[0] + seqs.len() as u64).collect();
        assert_eq!(seqs, expected);
        assert_eq!(seqs[0], 1, "the first event is seq 1");
    }
}

fn is_final(f: &Value, run_id: &str) -> bool {
    f["event"] == "chat" && f["payload"]["state"] == "final" && f["payload"]["runId"] == run_id
}

#[tokio::test]
async fn each_connection_gets_the_runs_of_the_sessions_it_named_and_one_that_named_none_all() {
    let server = start(hi_scenario()).await;
    let mut everyone = Seen::connect(&server.url).await;
    let mut a = Seen::connect(&server.url).await;
    let mut b = Seen::connect(&server.url).await;
    // Reading a session's history names it.
    a.request(
        "h-a",
        "chat.history",
        json!({"sessionKey": "agent:main:a"}),
        |f| f["id"] == "h-a",
    )
    .await;
    b.request(
        "h-b",
        "chat.history",
        json!({"sessionKey": "agent:main:b"}),
        |f| f["id"] == "h-b",
    )
    .await;
    a.ping("agent:main:a", "run-a1").await;
    b.ping("agent:main:b", "run-b1").await;
    // A run of a session is forwarded after every event broadcast before it: when `a` has
    // its second run's final, it has been sent (or not) all of `run-b1`'s events.
    a.ping("agent:main:a", "run-a2").await;
    // `agent` names its session too.
    let params =
        json!({"sessionKey": "agent:main:b", "message": "ping", "idempotencyKey": "run-b2"});
    b.request("agent-b2", "agent", params, |f| is_final(f, "run-b2"))
        .await;
    b.until(|f| f["id"] == "agent-b2" && f["payload"]["status"] == "ok")
        .await;
    everyone.until(|f| is_final(f, "run-b2")).await;

    assert_eq!(a.runs(), ["run-a1", "run-a2"]);
    assert_eq!(b.runs(), ["run-b1", "run-b2"]);
    assert_eq!(everyone.runs(), ["run-a1", "run-b1", "run-a2", "run-b2"]);
    // Each run's own events all arrive: the same ones the connection that named nothing got.
    let events_of = |seen: &Seen, run: &str| -> Vec<Value> {
        seen.frames
            .iter()
            .filter(|f| {
                f["payload"]["runId"] == run && (f["event"] == "agent" || f["event"] == "chat")
            })
            .map(|f| json!([f["event"], f["payload"]["seq"]]))
            .collect()
    };
    for run in ["run-a1", "run-a2"] {
        assert_eq!(events_of(&a, run), events_of(&everyone, run), "{run}");
    }
    for run in ["run-b1", "run-b2"] {
        assert_eq!(events_of(&b, run), events_of(&everyone, run), "{run}");
    }
    assert!(events_of(&a, "run-a1").len() >= 3);
    for seen in [&everyone, &a, &b] {
        seen.assert_seq_has_no_gaps();
    }
}

#[tokio::test]
async fn session_keys_match_whatever_their_case_and_other_events_still_reach_everyone() {
    let server = start(hi_scenario()).await;
    let mut a = Seen::connect(&server.url).await;
    a.request(
        "h",
        "chat.history",
        json!({"sessionKey": "Agent:Main:A"}),
        |f| f["id"] == "h",
    )
    .await;
    // Another connection joining is presence, which is no session's.
    let (mut other, _) = Client::connect(&server.url, &["operator.write"]).await;
    a.until(|f| f["event"] == "presence").await;
    other.chat_send("agent:main:z", "ping", "run-z").await;
    other.until(|f| is_final(f, "run-z")).await;
    a.ping("agent:main:a", "run-a").await;
    assert_eq!(a.runs(), ["run-a"]);
    a.assert_seq_has_no_gaps();
}
