//! exec and process tools with the process registry (being written).
