#!/usr/bin/env bash
# Proves that the version requirements in weft/, weft-macros/ and weft-actor/Cargo.toml are
# minimums that really build: in a scratch copy of the workspace (only those three crates,
# and a copy of Cargo.lock, so the real lock file is untouched) every direct dependency is
# pinned to the lowest version its requirement allows ("1.36" -> 1.36.0, "0.2" -> 0.2.0),
# the lock is re-resolved with `cargo update`, then weft is built with every feature (but the
# two that exist only to stop a build, `io-uring` and `taskdump`), and without `tokio-traits`
# (its own I/O traits, as the tokio facade builds it), and its tests and examples are
# type-checked. Stable toolchain only (no -Z minimal-versions). Needs
# network access to the crates.io index and python3 (tomllib, 3.11+).
#
# A requirement of ours that is lower than what another of our minimums needs (e.g. libc below
# what mio's minimum requires) makes the resolution fail: raise it to the floor named.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${MINVER_TARGET_DIR:-$root/target/minver}"
scratch="$target/workspace"
export CARGO_TARGET_DIR="$target"

rm -rf "$scratch"
mkdir -p "$scratch"
for crate in weft weft-macros weft-actor; do
    mkdir -p "$scratch/$crate"
    (cd "$root/$crate" && tar --exclude=target -cf - .) | (cd "$scratch/$crate" && tar -xf -)
done
cp "$root/Cargo.lock" "$scratch/Cargo.lock"
sed 's/^members = .*/members = ["weft", "weft-macros", "weft-actor"]/' "$root/Cargo.toml" >"$scratch/Cargo.toml"
cd "$scratch"

# Every direct dependency (normal, target-specific and dev) of both crates is pinned to the
# lowest version its requirement allows by rewriting the scratch manifests' requirements to
# `=x.y.z`; `cargo update` then re-resolves the copied lock file around those pins, so the
# transitive dependencies move to versions compatible with them (a plain
# `cargo update --precise` cannot lower a pin below what an already-locked transitive crate
# needs, e.g. a newer tokio-util's tokio requirement). `cfg(loom)` dependencies are skipped:
# only the loom job builds them.
python3 - weft/Cargo.toml weft-macros/Cargo.toml weft-actor/Cargo.toml <<'EOF_PY'
import re, sys, tomllib
mins = {}
def lowest(req):
    parts = req.strip().lstrip("^=").strip().split(".")
    return ".".join((parts + ["0", "0"])[:3])
def collect(deps, pins):
    for name, spec in deps.items():
        req = spec.get("version") if isinstance(spec, dict) else spec
        if req is None or (isinstance(spec, dict) and "path" in spec):
            continue
        v = lowest(req)
        if mins.setdefault(name, v) != v:
            sys.exit(f"{name}: two different requirements ({mins[name]} and {v}); make them agree")
        pins[name] = v
for path in sys.argv[1:]:
    text = open(path).read()
    doc = tomllib.loads(text)
    pins = {}
    tables = [doc]
    tables += [t for cfg, t in doc.get("target", {}).items() if not ("loom" in cfg and "not(loom)" not in cfg)]
    for t in tables:
        for key in ("dependencies", "dev-dependencies"):
            collect(t.get(key, {}), pins)
    for name, v in pins.items():
        n = re.escape(name)
        text, k1 = re.subn(rf'(?m)^({n}\s*=\s*")[^"]*(")', rf'\g<1>={v}\g<2>', text)
        text, k2 = re.subn(rf'(?m)^({n}\s*=\s*\{{[^}}\n]*\bversion\s*=\s*")[^"]*(")', rf'\g<1>={v}\g<2>', text)
        if k1 + k2 == 0:
            sys.exit(f"{path}: could not pin {name}")
    open(path, "w").write(text)
for name, v in sorted(mins.items()):
    print(f"  {name} ={v}")
EOF_PY

echo "== resolving around the pins (cargo update)"
if ! cargo update 2>&1 | tail -n 20; then
    echo "!! some requirement is below what another minimum needs (see the resolver error above);" >&2
    echo "!! raise it to the floor the error names" >&2
    exit 1
fi
# `cargo update` exits 0 with a warning-free resolution only if the pins are satisfiable.
features="macros,hyper,tokio-traits,openmetrics,test-util,full"
cargo tree -p weft --features "$features" -e normal,dev --depth 1 --prefix none | sort -u

echo "== building weft at the minimums"
cargo build -p weft --features "$features"
cargo build -p weft --no-default-features --features macros
cargo build -p weft-macros
echo "== type-checking weft's tests and examples at the minimums"
cargo check -p weft --features "$features" --tests --examples
echo "== weft-actor (path dependency on weft only) at the same minimums"
cargo check -p weft-actor --tests --examples
echo "minimal versions OK"
