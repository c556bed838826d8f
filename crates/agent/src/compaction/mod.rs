//! Context compaction (being written).
