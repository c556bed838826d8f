//! Warnings about repaired state, printed on stderr so the user knows what was fixed and
//! where the cut bytes were kept (nothing is ever dropped silently).

use pincer_store::{LoadReport, TailRepair};

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
}
