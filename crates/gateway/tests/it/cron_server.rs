//! Cron in a real server on 127.0.0.1 with the mock LLM: jobs managed over the `cron.*`
//! methods, an isolated job's turn and its announcement in the main session, a `main` job
//! that becomes a `[CRON:<id>]` event and a heartbeat with the reminder prompt, a reply of
//! only `HEARTBEAT_OK` that is never announced, run history and `cron` events.

use crate::support;

use std::sync::Arc;

use pincer_automation::cron::{CronService, CronSettings};
use pincer_automation::heartbeat::HeartbeatSettings;
use pincer_automation::system_events::SystemClock;
use pincer_testkit::Scenario;
use serde_json::{Value, json};
use support::client::{Client, last_prompt, text_of};

const TOKEN: &str = "cron-token-321";
const MAIN: &str = "agent:main:main";

/// A server with cron (jobs under a temporary directory) and an hourly heartbeat, and a
/// client connected to it.
async fn start(scenario: Scenario) -> (support::Running, tempfile::TempDir, Client) {
    let cron_dir = tempfile::tempdir().unwrap();
    let cron = CronService::open(
        cron_dir.path().join("cron"),
        CronSettings::default(),
        Arc::new(SystemClock),
        jiff::tz::TimeZone::UTC,
    );
    let running = support::start_server_with(scenario, TOKEN, move |options| {
        options.cron = Some(cron);
        options.heartbeat = vec![(
            "main".into(),
            HeartbeatSettings {
                every_ms: 3_600_000,
                ..HeartbeatSettings::default()
            },
        )];
    })
    .await;
    let client = Client::connect(&running, TOKEN).await;
    (running, cron_dir, client)
}

/// An hourly agent-turn job.
fn hourly(name: &str, message: &str) -> Value {
    json!({"name": name, "schedule": {"kind": "every", "everyMs": 3_600_000},
           "payload": {"kind": "agentTurn", "message": message}})
}

/// [`start`] with a model that answers `reply` to a prompt containing `asked`, and `job`
/// added over `cron.add`: the server, its cron directory, the client, the job as added and
/// its id.
async fn start_with_job(
    asked: &str,
    reply: &str,
    job: Value,
) -> (support::Running, tempfile::TempDir, Client, Value, String) {
    let (running, cron_dir, mut client) = start(support::answering(asked, reply)).await;
    let added = client.ok("cron.add", job).await;
    let id = added["id"].as_str().unwrap().to_owned();
    (running, cron_dir, client, added, id)
}

#[tokio::test]
async fn an_isolated_job_runs_its_turn_and_announces_the_reply_in_the_main_session() {
    let job = hourly("News", "Summarise the news");
    let (running, _cron_dir, mut client, job, id) =
        start_with_job("Summarise the news", "Three things happened today.", job).await;
    assert_eq!(job["sessionTarget"], "isolated");
    assert_eq!(job["delivery"], json!({"mode": "announce"}));
    assert!(job["state"]["nextRunAtMs"].as_i64().unwrap() > job["createdAtMs"].as_i64().unwrap());
    let listed = client.ok("cron.list", json!({})).await;
    assert_eq!(listed["jobs"].as_array().unwrap().len(), 1);

    let ran = client.ok("cron.run", json!({"id": id})).await;
    assert_eq!(ran, json!({"ok": true, "ran": true}));
    assert_eq!(
        last_prompt(&running),
        format!("[cron:{id} News] Summarise the news")
    );

    let runs = client.ok("cron.runs", json!({"id": id})).await;
    let entries = runs["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{runs}");
    assert_eq!(entries[0]["status"], "ok");
    assert_eq!(entries[0]["summary"], "Three things happened today.");
    assert_eq!(entries[0]["deliveryStatus"], "delivered");
    assert_eq!(entries[0]["sessionKey"], format!("cron:{id}"));

    // The announcement: a chat final in the main session, kept in its history.
    let announced: Vec<Value> = client
        .events_named("chat")
        .into_iter()
        .filter(|c| c["sessionKey"] == MAIN)
        .collect();
    assert_eq!(announced.len(), 1, "{announced:?}");
    assert_eq!(
        text_of(&announced[0]["message"]),
        "[cron: News]\n\nThree things happened today."
    );
    let history = client.ok("chat.history", json!({"sessionKey": MAIN})).await;
    let messages = history["messages"].as_array().unwrap();
    assert_eq!(
        text_of(messages.last().unwrap()),
        "[cron: News]\n\nThree things happened today."
    );

    let actions: Vec<String> = client
        .events_named("cron")
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(actions, ["added", "started", "finished"]);

    let job = client.ok("cron.list", json!({})).await["jobs"][0].clone();
    assert_eq!(job["state"]["lastStatus"], "ok");
    assert_eq!(job["state"]["lastRunStatus"], "ok");
    running.stop.cancel();
}

#[tokio::test]
async fn a_heartbeat_ok_reply_is_not_announced() {
    let job = json!({"name": "Poll", "schedule": {"kind": "cron", "expr": "0 9 * * *"},
                     "payload": {"kind": "agentTurn", "message": "Anything new?"}});
    let (running, _cron_dir, mut client, _, id) =
        start_with_job("Anything new?", "HEARTBEAT_OK", job).await;
    client.ok("cron.run", json!({"id": id})).await;
    let entries = client.ok("cron.runs", json!({"id": id})).await["entries"].clone();
    assert_eq!(entries[0]["status"], "ok");
    assert_eq!(entries[0]["deliveryStatus"], "not-delivered");
    let main_chats: Vec<Value> = client
        .events_named("chat")
        .into_iter()
        .filter(|c| c["sessionKey"] == MAIN)
        .collect();
    assert_eq!(main_chats, Vec::<Value>::new());
    let seen = serde_json::to_string(&client.events).unwrap();
    assert!(!seen.contains("HEARTBEAT_OK"), "{seen}");
    running.stop.cancel();
}

#[tokio::test]
async fn a_main_job_becomes_a_reminder_the_heartbeat_relays() {
    let job = json!({"name": "Oven", "schedule": {"kind": "at", "at": "20m"},
                     "payload": {"kind": "systemEvent", "text": "Take the bread out"}});
    let (running, _cron_dir, mut client, job, id) = start_with_job(
        "A scheduled reminder has been triggered",
        "Reminder: take the bread out of the oven!",
        job,
    )
    .await;
    assert_eq!(job["sessionTarget"], "main");
    assert_eq!(job["deleteAfterRun"], true);
    client
        .ok("cron.run", json!({"id": id, "mode": "force"}))
        .await;

    let heartbeat = client.heartbeat().await;
    assert_eq!(heartbeat["reason"], format!("cron:{id}"));
    assert_eq!(heartbeat["status"], "sent", "{heartbeat}");
    let prompt = last_prompt(&running);
    assert!(
        prompt.contains(&format!("] [CRON:{id}] Take the bread out\n")),
        "{prompt}"
    );
    assert!(
        prompt.ends_with("Please relay this reminder to the user in a helpful and friendly way."),
        "{prompt}"
    );
    // A one-shot job that ran is gone.
    let listed = client
        .ok("cron.list", json!({"includeDisabled": true}))
        .await;
    assert_eq!(listed["jobs"], json!([]));
    running.stop.cancel();
}

#[tokio::test]
async fn bad_jobs_are_refused_with_a_reason() {
    let (running, _cron_dir, mut client) = start(Scenario::new()).await;
    for (params, needle) in [
        (
            json!({"name": "x", "schedule": {"kind": "cron", "expr": "61 * * * *"},
                   "payload": {"kind": "agentTurn", "message": "m"}}),
            "invalid schedule",
        ),
        (
            json!({"name": "x", "schedule": {"kind": "cron", "expr": "0 9 * * *", "tz": "Mars/Olympus"},
                   "payload": {"kind": "agentTurn", "message": "m"}}),
            "Mars/Olympus",
        ),
        (
            json!({"name": "x", "schedule": {"kind": "at", "at": "2001-01-01T00:00:00Z"},
                   "payload": {"kind": "agentTurn", "message": "m"}}),
            "not in the future",
        ),
        (json!({"name": "x"}), "invalid cron job"),
    ] {
        let res = client.call("cron.add", params.clone()).await;
        assert_eq!(res["ok"], false, "{params}: {res}");
        let message = res["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{params}: {message}");
    }
    let res = client.call("cron.run", json!({"id": "nope"})).await;
    assert_eq!(res["ok"], false);
    assert_eq!(client.ok("cron.list", json!({})).await["jobs"], json!([]));
    running.stop.cancel();
}

/// A webhook endpoint on 127.0.0.1 that records the bodies it gets and answers `status`.
async fn webhook_endpoint(status: u16) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    use axum::routing::post;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let app = axum::Router::new().route(
        "/hook",
        post({
            let seen = std::sync::Arc::clone(&seen);
            move |axum::Json(body): axum::Json<Value>| async move {
                seen.lock().unwrap().push(body);
                axum::http::StatusCode::from_u16(status).unwrap()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}/hook?secret=s3cr3t"), seen)
}

#[tokio::test]
async fn a_webhook_delivery_posts_the_reply_and_a_refusal_fails_the_run() {
    let (url, seen) = webhook_endpoint(200).await;
    let job = json!({"name": "Site", "schedule": {"kind": "every", "everyMs": 600_000},
                     "payload": {"kind": "agentTurn", "message": "Check the site"},
                     "delivery": {"mode": "webhook", "to": url}});
    let (running, _cron_dir, mut client, _, id) =
        start_with_job("Check the site", "The site is up.", job).await;
    client.ok("cron.run", json!({"id": id})).await;
    let bodies = seen.lock().unwrap().clone();
    assert_eq!(bodies.len(), 1);
    assert_eq!(bodies[0]["jobId"], id);
    assert_eq!(bodies[0]["name"], "Site");
    assert_eq!(bodies[0]["text"], "The site is up.");
    let entry = client.ok("cron.runs", json!({"id": id})).await["entries"][0].clone();
    assert_eq!(entry["deliveryStatus"], "delivered", "{entry}");

    let (refusing, _) = webhook_endpoint(500).await;
    client
        .ok(
            "cron.update",
            json!({"id": id, "patch": {"delivery": {"to": refusing}}}),
        )
        .await;
    client.ok("cron.run", json!({"id": id})).await;
    let entries = client.ok("cron.runs", json!({"id": id})).await["entries"].clone();
    let failed = &entries[1];
    assert_eq!(failed["status"], "error", "{failed}");
    assert_eq!(failed["deliveryStatus"], "not-delivered");
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("answered 500"), "{error}");
    assert!(!error.contains("s3cr3t"), "{error}");
    running.stop.cancel();
}

#[tokio::test]
async fn the_run_history_of_every_job_is_one_page_newest_first() {
    let news = hourly("News", "Summarise the news");
    let (running, _cron_dir, mut client, _, news) =
        start_with_job("Summarise", "Quiet day.", news).await;
    let weather = hourly("Weather", "Summarise the weather");
    let weather = client.ok("cron.add", weather).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    client.ok("cron.run", json!({"id": news})).await;
    client.ok("cron.run", json!({"id": weather})).await;

    // As the Control UI's Automations page asks for it.
    let page = client
        .ok(
            "cron.runs",
            json!({"scope": "all", "limit": 50, "offset": 0, "sortDir": "desc", "query": ""}),
        )
        .await;
    assert_eq!(page["entries"][0]["jobName"], "Weather", "{page}");
    assert_eq!(page["entries"][1]["jobName"], "News", "{page}");
    assert_eq!(
        (
            &page["total"],
            &page["offset"],
            &page["limit"],
            &page["hasMore"],
            &page["nextOffset"]
        ),
        (
            &json!(2),
            &json!(0),
            &json!(50),
            &json!(false),
            &Value::Null
        )
    );
    // No job named: the same history; a query narrows it.
    assert_eq!(client.ok("cron.runs", json!({})).await["total"], 2);
    let found = client.ok("cron.runs", json!({"query": "news"})).await;
    assert_eq!(found["entries"][0]["jobId"], news.as_str(), "{found}");
    assert_eq!(found["total"], 1);
    // One job's runs keep their shape.
    let one = client.ok("cron.runs", json!({"id": weather})).await;
    assert_eq!(one["entries"].as_array().unwrap().len(), 1, "{one}");
    running.stop.cancel();
}

#[tokio::test]
async fn cron_list_pages_the_jobs_as_the_control_ui_asks() {
    let (running, _cron_dir, mut client) = start(Scenario::new()).await;
    for name in ["a", "b", "c"] {
        client.ok("cron.add", hourly(name, "m")).await;
    }
    let page = |v: &Value| {
        (
            v["jobs"].as_array().unwrap().len(),
            v["total"].clone(),
            v["offset"].clone(),
            v["limit"].clone(),
            v["hasMore"].clone(),
            v["nextOffset"].clone(),
        )
    };
    let first = client
        .ok(
            "cron.list",
            json!({"agentId": "main", "includeDisabled": true, "limit": 2, "offset": 0}),
        )
        .await;
    assert_eq!(
        page(&first),
        (2, json!(3), json!(0), json!(2), json!(true), json!(2))
    );
    let revision = first["snapshotRevision"].as_str().unwrap().to_owned();
    assert!(revision.starts_with("sha256:"), "{revision}");
    let last = client
        .ok("cron.list", json!({"limit": 2, "offset": 2}))
        .await;
    assert_eq!(
        page(&last),
        (1, json!(3), json!(2), json!(2), json!(false), Value::Null)
    );
    assert_eq!(
        last["snapshotRevision"],
        revision.as_str(),
        "nothing changed"
    );
    // Without a limit, every job on one page (what the CLI's `cron list` reads).
    let all = client.ok("cron.list", json!({})).await;
    assert_eq!(
        page(&all),
        (3, json!(3), json!(0), json!(3), json!(false), Value::Null)
    );
    let id = all["jobs"][0]["id"].as_str().unwrap().to_owned();
    client.ok("cron.remove", json!({"id": id})).await;
    let after = client.ok("cron.list", json!({"limit": 50})).await;
    assert_eq!(
        page(&after),
        (2, json!(2), json!(0), json!(50), json!(false), Value::Null)
    );
    assert_ne!(after["snapshotRevision"], revision.as_str(), "a job went");
    let empty = client
        .ok("cron.list", json!({"limit": 0, "offset": 9}))
        .await;
    assert_eq!(
        page(&empty),
        (0, json!(2), json!(9), json!(1), json!(false), Value::Null)
    );
    running.stop.cancel();
}
