//! Arbitrary text as a request's `Origin` and `Host` headers and as entries of
//! `gateway.controlUi.allowedOrigins` / `gateway.allowedHosts` (see the shared check).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../checks/http_origin_host.rs"]
mod check;

fuzz_target!(|input: &str| check::check(input));
