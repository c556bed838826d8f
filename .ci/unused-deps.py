#!/usr/bin/env python3
"""Fails when a crate declares a dependency its code never names (what `cargo machete` checks,
the same way: a dependency is used if its crate name appears as a path in the crate's Rust
files). Written here because installing cargo-machete costs CI two minutes of compiling for a
check that is a few regular expressions.

A dependency used only in a way this cannot see (through a macro, or by files pulled in with
#[path] from outside the crate) is listed with its reason under
[package.metadata.cargo-machete] `ignored` in that crate's Cargo.toml (the same key as
cargo-machete's, so either tool reads it).

    python3 .ci/unused-deps.py            # the workspace's crates and fuzz/
"""
import os
import re
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECTIONS = ("dependencies", "dev-dependencies", "build-dependencies")


def manifests():
    crates = os.path.join(ROOT, "crates")
    for name in sorted(os.listdir(crates)):
        path = os.path.join(crates, name, "Cargo.toml")
        if os.path.isfile(path):
            yield path
    yield os.path.join(ROOT, "fuzz", "Cargo.toml")


def rust_sources(crate_dir):
    text = []
    for top in ("src", "tests", "benches", "examples", "fuzz_targets", "checks", "build.rs"):
        path = os.path.join(crate_dir, top)
        if os.path.isfile(path):
            text.append(open(path, encoding="utf-8").read())
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = [d for d in dirnames if d != "target"]
            for f in filenames:
                if f.endswith(".rs"):
                    text.append(open(os.path.join(dirpath, f), encoding="utf-8").read())
    return "\n".join(text)


def declared(manifest):
    deps = {}
    tables = [manifest]
    tables += [t for t in manifest.get("target", {}).values()]
    for table in tables:
        for section in SECTIONS:
            for name, spec in table.get(section, {}).items():
                package = spec.get("package", name) if isinstance(spec, dict) else name
                deps[name] = package
    return deps


def main():
    unused = []
    for path in manifests():
        with open(path, "rb") as f:
            manifest = tomllib.load(f)
        package = manifest.get("package", {})
        ignored = set(package.get("metadata", {}).get("cargo-machete", {}).get("ignored", []))
        sources = rust_sources(os.path.dirname(path))
        for name in sorted(declared(manifest)):
            if name in ignored:
                continue
            ident = re.escape(name.replace("-", "_"))
            if not re.search(rf"(?<![\w:]){ident}\s*::|\b(use|extern crate)\s+{ident}\b", sources):
                unused.append(f"{os.path.relpath(path, ROOT)}: {name}")
    if unused:
        print("declared but never used (remove them, or list them with the reason under "
              "[package.metadata.cargo-machete] ignored):")
        print("\n".join(f"  {u}" for u in unused))
        return 1
    print("unused dependencies: none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
