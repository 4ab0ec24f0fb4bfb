"""Cargo features are public API too: the check that tokio's feature names reach weft both ways.

Two routes make weft a tokio, and each needs tokio's feature names:
- the patch route (`[patch.crates-io] tokio = { path = "compat/tokio" }`): the facade crate must
  declare every feature tokio declares, including the implicit ones of tokio's optional
  dependencies that crates name (`bytes`, `mio`, ...), and map each feature weft also has onto
  weft's (`fs = ["weft/fs"]`);
- the renaming route (`tokio = { package = "weft", features = [...] }`): weft itself must declare
  every feature tokio declares explicitly.

The list exists twice by necessity (a manifest cannot compute its features); this check makes
the second copy follow the first, and both follow tokio's manifest.
"""

import json
import os
import subprocess
import tomllib


def tokio_manifest(project_dir, env):
    """The path of the tokio `Cargo.toml` the scratch project at `project_dir` resolved.

    Offline and for this host only: the rustdoc build before it downloaded what this platform
    needs, and an unfiltered `cargo metadata` would want every platform's dependencies too
    (`redox_syscall`, ...), which a fresh machine's registry cache does not hold."""
    host = subprocess.run(["rustc", "-vV"], env=env, check=True, capture_output=True, text=True).stdout
    triple = next(line.split(": ", 1)[1] for line in host.splitlines() if line.startswith("host: "))
    meta = subprocess.run(["cargo", "metadata", "--format-version", "1", "--offline", "--filter-platform", triple],
                          cwd=project_dir, env=env, check=True, capture_output=True, text=True).stdout
    for package in json.loads(meta)["packages"]:
        if package["name"] == "tokio":
            return package["manifest_path"]
    raise SystemExit(f"no tokio package in {project_dir}")


def features_of(manifest):
    """(explicit features, implicit features of optional dependencies not hidden by `dep:`)."""
    with open(manifest, "rb") as f:
        toml = tomllib.load(f)
    explicit = dict(toml.get("features", {}))
    hidden = {v[len("dep:"):] for values in explicit.values() for v in values if v.startswith("dep:")}
    optional = set()
    for table in [toml.get("dependencies", {})] + [t.get("dependencies", {}) for t in toml.get("target", {}).values()]:
        optional |= {name for name, spec in table.items() if isinstance(spec, dict) and spec.get("optional")}
    return explicit, optional - hidden - set(explicit)


def failures(tokio_toml, facade_toml, weft_toml):
    """Every way the facade's or weft's features fall short of tokio's, as sentences."""
    tokio, implicit = features_of(tokio_toml)
    facade, _ = features_of(facade_toml)
    weft, _ = features_of(weft_toml)
    out = []
    for name in sorted(set(tokio) - {"default"}):
        if name not in facade:
            out.append(f"feature {name}: tokio declares it, compat/tokio/Cargo.toml does not")
        elif name in weft and f"weft/{name}" not in facade[name]:
            out.append(f"feature {name}: compat/tokio/Cargo.toml should map it onto weft's (\"weft/{name}\")")
        if name not in weft:
            out.append(f"feature {name}: tokio declares it, weft/Cargo.toml does not (the renaming route)")
    for name in sorted(implicit - set(facade)):
        out.append(f"feature {name}: tokio's optional dependency, which crates name; compat/tokio/Cargo.toml lacks it")
    for name in sorted(set(facade) - set(tokio) - implicit):
        out.append(f"feature {name}: compat/tokio/Cargo.toml declares it, tokio does not")
    return out


def check(scratch_project, env, root):
    """Prints the verdict; returns the failures."""
    found = failures(tokio_manifest(scratch_project, env), os.path.join(root, "compat", "tokio", "Cargo.toml"),
                     os.path.join(root, "weft", "Cargo.toml"))
    print("cargo features: tokio's names reach the facade and weft" if not found
          else f"cargo features: {len(found)} difference(s) from tokio's")
    return found
