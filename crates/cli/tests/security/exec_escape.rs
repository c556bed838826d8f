//! (filled in by the finding's fix)
