//! Arbitrary bytes as a transcript file: opening never panics (old format versions are
//! migrated on the way); when it succeeds the context can be built, and an append lands as
//! the new leaf of a file that reopens without error and needs no second migration.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pincer_store::{EntryBody, LoadReport, SessionInfoEntry, TailRepair, Transcript};

/// Repairs keep the cut bytes beside the file and migrations the original; a fuzzer must
/// not pile them up.
fn forget_saved_tail(report: &LoadReport) {
    if let Some(TailRepair::Truncated { saved_to, .. }) = &report.repaired_tail {
        let _ = std::fs::remove_file(saved_to);
    }
    if let Some(migration) = &report.migrated {
        let _ = std::fs::remove_file(&migration.backup);
    }
}

fuzz_target!(|input: &[u8]| {
    let path = std::env::temp_dir().join(format!(
        "pincer-fuzz-transcript-{}.jsonl",
        std::process::id()
    ));
    if std::fs::write(&path, input).is_err() {
        return;
    }
    if let Ok((mut t, report)) = Transcript::open(&path) {
        forget_saved_tail(&report);
        let _ = t.context();
        let body = EntryBody::SessionInfo(SessionInfoEntry {
            name: Some("fuzz".into()),
        });
        let id = t.append_body(body).map(|e| e.id.clone()).ok();
        if let Some(id) = id {
            let (again, report) = Transcript::open(&path).expect("reopen after append");
            forget_saved_tail(&report);
            assert!(report.migrated.is_none(), "migrated twice");
            assert_eq!(again.leaf_id(), Some(id.as_str()));
            let _ = again.context();
        }
    }
    let _ = std::fs::remove_file(&path);
});
