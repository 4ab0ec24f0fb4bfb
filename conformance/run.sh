#!/usr/bin/env bash
# Builds tokio's own integration tests (tests/*.rs of the tokio release pinned in this
# directory's Cargo.lock, read from cargo's registry) against weft renamed as `tokio`, runs
# them, and prints the conformance table (see report.py and README.md's Conformance section).
#
#   conformance/run.sh [FILE_FILTER_REGEX]
#
# Env: CARGO_TARGET_DIR (default ../target/conformance), CONFORMANCE_JOBS (parallel
# test binaries, default 2), CONFORMANCE_TIMEOUT (seconds per test binary, default 120),
# CONFORMANCE_STRICT=1 (exit 1 when a failure is not listed in known-failures.txt).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../target/conformance}"
filter="${1:-.}"
out="$CARGO_TARGET_DIR/conformance-run"
rm -rf "$out" && mkdir -p "$out/logs"

cargo fetch --locked -q
tokio_dir="$(cargo metadata --locked --format-version 1 | python3 -c '
import json, sys, os
m = json.load(sys.stdin)
p = [p for p in m["packages"] if p["name"] == "tokio" and p["source"] and "registry" in p["source"]]
assert len(p) == 1, "expected exactly one registry tokio in Cargo.lock"
print(p[0]["version"], os.path.dirname(p[0]["manifest_path"]))')"
tokio_version="${tokio_dir%% *}"
tokio_dir="${tokio_dir#* }"
echo "conformance: tokio $tokio_version tests from $tokio_dir/tests"

# tests/ holds links into the registry copy, never copies.
rm -rf tests && mkdir tests
ln -s "$tokio_dir/tests/support" tests/support
excluded="$(grep -v '^#' excluded.txt | cut -d: -f1)"
for f in "$tokio_dir"/tests/*.rs; do
    name="$(basename "$f")"
    grep -qxF "$name" <<<"$excluded" && continue
    [[ "$name" =~ $filter ]] || continue
    ln -s "$f" "tests/$name"
done
ls tests/*.rs | xargs -n1 basename | sed 's/\.rs$//' | sort > "$out/included.txt"
echo "conformance: $(wc -l < "$out/included.txt") files included, $(grep -vc '^#' excluded.txt) excluded (excluded.txt)"

# One crate, one test target per file: dependencies build once; --keep-going builds every
# target that can be built and the JSON messages say which produced a binary.
cargo build --locked --tests --keep-going --message-format=json-render-diagnostics \
    >"$out/build.json" 2>"$out/build.log" || true
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m["target"]["kind"] == ["test"] and m.get("executable"):
        print(m["target"]["name"], m["executable"])
' "$out/build.json" | sort > "$out/built.txt"

# Run each binary with a time limit; a hang is a failure of the whole file.
jobs="${CONFORMANCE_JOBS:-2}"
limit="${CONFORMANCE_TIMEOUT:-120}"
# From tokio's package root, as `cargo test` runs them there (a few read ./Cargo.toml).
export out limit tokio_dir
xargs -P "$jobs" -L1 bash -c '
    name="$0"; exe="$1"
    cd "$tokio_dir" && timeout -k 5 "$limit" "$exe" --test-threads=2 >"$out/logs/$name.log" 2>&1
    echo $? >"$out/logs/$name.rc"
' <"$out/built.txt"

results_md=()
[ "$filter" = "." ] && results_md=("$here/RESULTS.md")
python3 report.py "$out" "$here/known-failures.txt" "$here/excluded.txt" "$tokio_version" "${results_md[@]}"
