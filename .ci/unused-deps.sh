#!/usr/bin/env bash
# Declared but unused dependencies fail CI (cargo-machete: it reads each crate's sources for
# the names of its dependencies, so it is fast and needs no build). A dependency it cannot
# see (used only through a macro or a re-export) is listed, with the reason, under
# [package.metadata.cargo-machete] `ignored` in that crate's Cargo.toml.
set -euo pipefail
cd "$(dirname "$0")/.."

tools=target/ci-tools
if [ ! -x "$tools/bin/cargo-machete" ]; then
    cargo install --quiet --locked cargo-machete@0.9.2 --root "$tools"
fi
"$tools/bin/cargo-machete" --version
# Exit code 1 when any crate (the workspace's and fuzz/) declares one it does not use.
"$tools/bin/cargo-machete"
