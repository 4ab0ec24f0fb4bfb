#!/usr/bin/env python3
"""The binaries' dependency requirements are the versions they are built and measured with.

Checked for weft-lab and weft-search (an installed tool, a dependency of the lab only).

weft, weft-macros and weft-actor state searched minimums (proven by .ci/minimal-versions.sh).
weft-lab is a binary, never a dependency of anyone, with ~30 registry dependencies (four actor
frameworks, three runtimes, HTTP stacks): searching each one's floor would cost a full lab build
per step. Instead its requirements are pinned *down to* what Cargo.lock resolves, so "the lowest
version that really works" is exactly the version CI builds: no requirement claims a floor that
was never compiled. This script checks that (default) or rewrites lab/Cargo.toml to hold
(`--write`, after a dependency was added or `cargo update` moved one).
"""
import json, re, subprocess, sys, tomllib

root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
meta = json.loads(subprocess.run(["cargo", "metadata", "--format-version", "1", "--locked"], cwd=root,
                                 capture_output=True, text=True, check=True).stdout)
pkgs = {p["id"]: p for p in meta["packages"]}


def check(crate, rel):
    path = f"{root}/{rel}"
    me = next(p for p in meta["packages"] if p["name"] == crate)
    node = next(n for n in meta["resolve"]["nodes"] if n["id"] == me["id"])
    resolved = {pkgs[d["pkg"]]["name"]: pkgs[d["pkg"]]["version"] for d in node["deps"]}
    text = open(path).read()
    doc = tomllib.loads(text)
    bad = []
    for table in ("dependencies", "dev-dependencies", "build-dependencies"):
        for name, spec in doc.get(table, {}).items():
            if isinstance(spec, dict) and "path" in spec:
                continue
            req = spec.get("version") if isinstance(spec, dict) else spec
            pkg = spec.get("package", name) if isinstance(spec, dict) else name
            have = resolved.get(pkg)
            if have is None:
                sys.exit(f"{rel}: {name}: not in the resolved dependencies")
            if req.lstrip("^") != have:
                bad.append((name, req, have))
    if not bad:
        print(f"{crate} requirements: all equal to the locked versions ({len(resolved)} resolved deps)")
        return
    if "--write" not in sys.argv:
        for name, req, have in bad:
            print(f"{rel}: {name} = \"{req}\" but Cargo.lock builds {have}", file=sys.stderr)
        sys.exit(f"run `python3 .ci/lab-requirements.py --write` and commit {rel}")
    for name, req, have in bad:
        n = re.escape(name)
        text, k1 = re.subn(rf'(?m)^({n}\s*=\s*")[^"]*(")', rf'\g<1>{have}\g<2>', text)
        text, k2 = re.subn(rf'(?m)^({n}\s*=\s*\{{[^}}\n]*\bversion\s*=\s*")[^"]*(")', rf'\g<1>{have}\g<2>', text)
        if k1 + k2 != 1:
            sys.exit(f"could not rewrite {name}")
        print(f"  {rel}: {name}: {req} -> {have}")
    open(path, "w").write(text)


check("weft-lab", "lab/Cargo.toml")
check("weft-search", "weft-search/Cargo.toml")
