//! Arbitrary bytes as the JSON a client sends `cron.add` and `cron.update`, and as a model
//! reply with `MEDIA:` lines: a job is created from the text (as `NewCronJob`), then the
//! same text is applied to it as a patch; a reply is split into text and media paths.
//! None of it panics, a created or patched job always validates, and a reply without
//! `MEDIA:` comes back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_automation::cron::{
    CronPayload, CronSchedule, NewCronJob, apply_patch, create_job, validate_job,
};
use pincer_turns::media_reply::parse_media_lines;

const NOW: i64 = 1_790_000_000_000;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (media_text, paths) = parse_media_lines(&text);
    if !text.contains("MEDIA:") {
        assert_eq!(media_text, text);
        assert!(paths.is_empty());
    }
    let tz = pincer_automation::cron::local_time_zone();
    let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
        return;
    };
    if let Ok(input) = serde_json::from_value::<NewCronJob>(value.clone()) {
        if let Ok(job) = create_job(input, "0b5e2c1a-3f4d-4e5f-8a9b-0c1d2e3f4a5b".into(), NOW, &tz) {
            assert!(validate_job(&job).is_ok());
        }
    }
    let base = NewCronJob {
        name: "fuzz".into(),
        description: None,
        agent_id: None,
        session_key: None,
        enabled: None,
        delete_after_run: None,
        schedule: CronSchedule::every(60_000, None),
        session_target: None,
        wake_mode: None,
        payload: CronPayload::agent_turn("hi"),
        delivery: None,
    };
    if let Ok(job) = create_job(base, "0b5e2c1a-3f4d-4e5f-8a9b-0c1d2e3f4a5c".into(), NOW, &tz) {
        if let Ok(patched) = apply_patch(&job, &value, NOW, &tz) {
            assert!(validate_job(&patched).is_ok());
            assert_eq!(patched.id, job.id);
        }
    }
});
