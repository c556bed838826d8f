//! TODO(browser tool helper)
