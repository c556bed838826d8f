//! web_fetch tests (TODO)
