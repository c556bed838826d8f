//! TODO(browser runtime helper)
