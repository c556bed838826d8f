//! pincer-browser's integration tests, against a real headless Chromium (`/usr/bin/chromium`,
//! installed by `.ci/run`) on fixture pages served from 127.0.0.1.

mod guard;
mod runtime;
mod tool;
