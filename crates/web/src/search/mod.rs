//! TODO(web_search helper)
