//! An error as one line with its causes, the way `anyhow` prints one with `{:#}`: for
//! errors that cross a process or protocol boundary as text (RPC replies, plan failures).

/// `error: its source: its source's source…`.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}
