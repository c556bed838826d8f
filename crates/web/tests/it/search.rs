//! web_search tests (TODO)
