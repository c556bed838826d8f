#!/usr/bin/env bash
# Runs every fuzz target of Pincer for FUZZ_SECONDS (default 20) each, on stable Rust
# (`--sanitizer none`). Installs cargo-fuzz when it is missing. Seeds come from seeds/.
set -euo pipefail
cd "$(dirname "$0")"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked --version 0.13.2
seconds="${FUZZ_SECONDS:-20}"
for target in $(cargo fuzz list); do
  mkdir -p "corpus/$target"
  seeds=()
  [ -d "seeds/$target" ] && seeds=("seeds/$target")
  echo "fuzz: $target for ${seconds}s"
  cargo fuzz run "$target" --sanitizer none "corpus/$target" "${seeds[@]}" -- \
    -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 2>&1 | grep -E "^(Done|stat::number_of_executed_units|==|SUMMARY)" || true
  # cargo fuzz exits non-zero on a crash; grep swallowed that, so check the artifacts.
  if compgen -G "artifacts/$target/crash-*" >/dev/null; then
    echo "fuzz: $target crashed; inputs in fuzz/artifacts/$target" >&2
    exit 1
  fi
done
