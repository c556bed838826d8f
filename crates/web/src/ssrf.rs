//! TODO(web_fetch helper)
