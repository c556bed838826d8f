//! pincer-turns's integration tests, one binary (linked once, not once per file); run one
//! module with `cargo test -p pincer-turns --test it <module>::`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(
    clippy::disallowed_methods,
    reason = "tests set up and inspect files directly"
)]

mod chunker;
mod dedupe;
mod prompt;
mod router_keys;
mod router_roles;
mod router_route;
mod skills;
mod skills_single;
mod turn;
mod workspace;
