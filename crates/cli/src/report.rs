//! Warnings about repaired state, printed on stderr so the user knows what was fixed and
//! where the cut bytes were kept (nothing is ever dropped silently).

use pincer_store::{LoadReport, PruneReport, RebuildReport, RetentionMode, TailRepair};

/// Says what loading a transcript skipped or repaired.
pub fn load_report(report: &LoadReport) {
    for issue in &report.invalid_lines {
        eprintln!(
            "warning: transcript line {} is not valid JSON and was skipped (it stays in the file): {}",
            issue.line, issue.error
        );
    }
    match &report.repaired_tail {
        Some(TailRepair::Truncated {
            line,
            removed_bytes,
            saved_to,
            ..
        }) => eprintln!(
            "warning: the transcript ended in a torn line {line} ({removed_bytes} bytes, from an interrupted write); it was cut off and kept in {}",
            saved_to.display()
        ),
        Some(TailRepair::NewlineAdded { .. }) | None => {}
    }
    if report.recreated_missing {
        eprintln!(
            "warning: the session's transcript file was missing; a new, empty one was started under the same session id"
        );
    }
    if let Some(m) = &report.migrated {
        eprintln!(
            "note: the transcript was migrated from format version {} to {}; the original is kept as {}",
            m.from_version,
            m.to_version,
            m.backup.display()
        );
    }
}

/// Says that a corrupt session index was rebuilt, and where the old one was kept.
pub fn rebuilt(report: &RebuildReport) {
    eprintln!(
        "warning: the session index was corrupt ({}); it was rebuilt from {} transcript(s) and the old file kept as {}",
        report.error,
        report.sessions.len(),
        report.corrupt_copy.display()
    );
    for bad in &report.unreadable {
        eprintln!(
            "warning: transcript {} could not be read and is not indexed (it stays where it is)",
            bad.path.display()
        );
    }
}

/// What session maintenance did (enforce) or would do (warn).
pub fn pruned(report: &PruneReport) {
    let sessions = report.sessions.len();
    let files = report.orphans.len() + report.deleted_archives.len();
    match report.mode {
        RetentionMode::Enforce => eprintln!(
            "note: session maintenance pruned {sessions} old session(s) (transcripts kept as *.deleted.*) and cleaned {files} old file(s)"
        ),
        RetentionMode::Warn => eprintln!(
            "note: {sessions} session(s) and {files} file(s) are past session.maintenance limits; set session.maintenance.mode to \"enforce\" to prune them"
        ),
    }
}
