#!/usr/bin/env python3
"""The ecosystem conformance harness: crates built on tokio, tested on weft.

For each crate in `crates.txt` (pinned versions) it takes the published source from cargo's
registry (fetched by cargo, never copied into this repository), adds
`[patch.crates-io] tokio = { path = "compat/tokio" }`, checks that no real tokio is left in the
graph, builds every test target with `--keep-going` (a target that does not compile is counted,
not fatal), runs each test binary, and prints one table: crate, test targets compiled / total,
tests passed / failed / ignored, and failures not explained in `known-failures.txt`
(`crate target::test: reason`). Exit 1 on an unexplained failure or a target that does not
compile unless it is listed (`crate target: reason`).

A crate may name services its tests need (`needs=postgres` in `crates.txt`) and environment
variables for its test binaries (`env=NAME=VALUE`). The harness starts each service after the
crate's build, on 127.0.0.1 only, from a fresh temporary directory, and always stops it and removes
that directory afterwards (also on an error, Ctrl-C or SIGTERM); its log is kept in the work dir
(`services/`). `postgres`: PostgreSQL 15 (Debian's `postgresql` is installed when missing) on port
5433 with the roles, authentication methods and extensions tokio-postgres's and
deadpool-postgres's tests expect (see `POSTGRES_HBA` and `POSTGRES_SETUP` in `services.py`).
`rabbitmq`: RabbitMQ 3.10 (Debian's `rabbitmq-server`, installed when missing) with AMQP on
127.0.0.1:5672 (lapin's tests' default `AMQP_ADDR`, user `guest`, vhost `/`), its config, Mnesia
database, logs and Erlang cookie in the temporary directory, the Erlang distribution port (25672)
and a private epmd (port 24369, stopped with the node) on loopback too.

A test target listed in `isolate=TARGET[,TARGET]` runs one test per process (two at a time), as
`cargo nextest` does: zenoh's `regions` tests each install a process-wide tracing subscriber and
count the events it captured, so in one process only the first test's module sees any.
`retries=N` runs such a test that failed again, up to N times, as the crate's nextest profile
does (zenoh's: 2); a test that passed only on a retry is printed. A crate
marked `full` (a long build or run) is left out unless `--full` is given or `--only` names it;
CI runs without either.

    compat/ecosystem/run.py [--full] [--only tokio-util,axum] [--work DIR]
"""

import argparse
import atexit
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from services import SERVICES, on_signal, start_services, stop_all  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FACADE = REPO / "compat" / "tokio"


def crates():
    """(name, version, features, services, env, own, isolate, retries, full) for each line of
    crates.txt; `own` holds `patch` and/or `dev` for `patch=self` and `dev=self`, `isolate` the
    test targets (`tests/NAME`) run one test per process, `retries` how often such a test that
    failed runs again, `full` whether only `--full` (or `--only`) runs the crate."""
    for line in (HERE / "crates.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, version, features, *options = line.split()
        services, env, own, isolate, retries, full = [], {}, set(), set(), 0, False
        for option in options:
            key, _, value = option.partition("=")
            if option == "full":
                full = True
            elif key == "isolate" and value:
                isolate |= {f"tests/{t}" for t in value.split(",") if t}
            elif key == "retries" and value.isdigit():
                retries = int(value)
            elif key == "needs" and value:
                services += [s for s in value.split(",") if s]
            elif key == "env" and "=" in value:
                var, _, val = value.partition("=")
                env[var] = val
            elif key in ("patch", "dev") and value == "self":
                own.add(key)
            else:
                sys.exit(f"crates.txt: {name}: unknown option {option!r} (expected needs=SERVICE, env=NAME=VALUE, patch=self, dev=self, isolate=TARGET, retries=N or full)")
        for service in services:
            if service not in SERVICES:
                sys.exit(f"crates.txt: {name}: unknown service {service!r} (known: {', '.join(SERVICES)})")
        yield name, version, features, services, env, own, isolate, retries, full


def known():
    entries = {}
    for line in (HERE / "known-failures.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, reason = line.split(": ", 1)
            entries[key.strip()] = reason.strip()
    return entries


def registry_source(name, version, work):
    """The crate's unpacked source in cargo's registry, fetched through a throwaway manifest."""
    for root in Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"), "registry", "src").glob("*"):
        path = root / f"{name}-{version}"
        if path.is_dir():
            return path
    fetch = work / "fetch" / name
    (fetch / "src").mkdir(parents=True, exist_ok=True)
    (fetch / "src" / "lib.rs").write_text("")
    (fetch / "Cargo.toml").write_text(
        f'[package]\nname = "fetch-{name}"\nversion = "0.0.0"\nedition = "2021"\n\n[workspace]\n\n'
        f'[dependencies]\n{name} = "={version}"\n'
    )
    subprocess.run(["cargo", "fetch", "-q"], cwd=fetch, check=True)
    for root in Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"), "registry", "src").glob("*"):
        path = root / f"{name}-{version}"
        if path.is_dir():
            return path
    sys.exit(f"{name} {version}: not in cargo's registry after `cargo fetch`")


def prepare(name, version, work, own=()):
    dst = work / "src" / f"{name}-{version}"
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(registry_source(name, version, work), dst)
    (dst / "Cargo.lock").unlink(missing_ok=True)
    manifest = dst / "Cargo.toml"
    text = manifest.read_text()
    if "dev" in own:
        # The crate's own repository lists the crate as its own dev-dependency (sea-orm: its
        # lib's unit tests say `sea_orm::…`); the published manifest drops that path dependency.
        text += f'\n[dev-dependencies.{name}]\npath = "."\n'
    text += f'\n[patch.crates-io]\ntokio = {{ path = "{FACADE}" }}\n'
    if "patch" in own:
        # A dev-dependency that depends on this crate from crates.io (actix-test on actix-web)
        # must see this very copy, as the crate's own workspace arranges with the same patch;
        # otherwise the graph has two copies of the crate and their types do not unify.
        text += f'{name} = {{ path = "." }}\n'
    if "\n[workspace]" not in text:
        text += "\n[workspace]\n"
    manifest.write_text(text)
    subprocess.run(["cargo", "generate-lockfile", "-q"], cwd=dst, check=True)
    tree = subprocess.run(
        ["cargo", "tree", "-i", "tokio", "-e", "normal,build,dev", "--prefix", "none", "--target", "all"],
        cwd=dst, capture_output=True, text=True,
    )
    first = tree.stdout.splitlines()[0] if tree.stdout else tree.stderr.strip()
    if tree.returncode != 0 or str(FACADE) not in first:
        sys.exit(f"{name}: the patched graph does not use the facade as its only tokio: {first}")
    return dst


def feature_args(features):
    if features.startswith("all+"):
        # Every feature, plus features of dependencies the crate's own repository turns on
        # for its tests (a published manifest drops its path dev-dependencies' features).
        return ["--all-features", "--features", features[len("all+"):]]
    if features == "all":
        return ["--all-features"]
    if features == "-":
        return []
    return ["--features", features]


def build(dst, features, env):
    """Builds every test target; returns ({target: executable}, {target: first error})."""
    cmd = ["cargo", "build", "--tests", "--keep-going", "--message-format=json"] + feature_args(features)
    out = subprocess.run(cmd, cwd=dst, capture_output=True, text=True, env=env)
    built, errors = {}, {}
    for line in out.stdout.splitlines():
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        target = msg.get("target", {})
        if str(dst) not in msg.get("package_id", ""):
            # An error in a dependency (weft, the facade, a dev-dependency) stops the crate's
            # own targets from building at all: report it against the library.
            if msg.get("reason") == "compiler-message" and msg["message"]["level"] == "error":
                pkg = msg.get("package_id", "?").rsplit("#", 1)[-1]
                errors.setdefault("lib", f"dependency {pkg}: " + msg["message"]["rendered"].splitlines()[0])
            continue
        label = target_label(target)
        if msg.get("reason") == "compiler-artifact" and msg.get("profile", {}).get("test"):
            if msg.get("executable"):
                built[label] = msg["executable"]
        elif msg.get("reason") == "compiler-message" and msg["message"]["level"] == "error":
            errors.setdefault(label, msg["message"]["rendered"].splitlines()[0])
    return built, errors


def target_label(target):
    kinds = target.get("kind", [])
    if "test" in kinds:
        return f"tests/{target['name']}"
    return f"lib" if "lib" in kinds or "proc-macro" in kinds else f"{'/'.join(kinds)}/{target.get('name')}"


def run_tests(executable, cwd, env, args=("--test-threads=2",)):
    out = subprocess.run([executable, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)
    passed = failed = ignored = 0
    failures = []
    for line in out.stdout.splitlines():
        m = re.match(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", line)
        if m:
            passed, failed, ignored = int(m[1]), int(m[2]), int(m[3])
        m = re.match(r"test (\S+) \.\.\. FAILED", line)
        if m:
            failures.append(m[1])
    if out.returncode != 0 and not failures:
        failures.append("<binary exited %d without a test result>" % out.returncode)
        failed = max(failed, 1)
    return passed, failed, ignored, failures


def run_isolated(executable, cwd, env, retries):
    """Each test of the binary in a process of its own, two at a time, a failed one run again up to
    `retries` times (nextest's `retries`); the same totals as run_tests. A test that passed only
    on a retry is printed, so a flaky pass stays visible."""
    listing = subprocess.run([executable, "--list", "--format", "terse"], cwd=cwd, capture_output=True, text=True, env=env, check=True)
    tests = [line[: -len(": test")] for line in listing.stdout.splitlines() if line.endswith(": test")]

    def one(test):
        for attempt in range(retries + 1):
            result = run_tests(executable, cwd, env, (test, "--exact"))
            if not result[1]:
                if attempt:
                    print(f"  {Path(executable).name}: {test} passed on retry {attempt} of {retries}", flush=True)
                break
        return result

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, tests))
    passed = sum(r[0] for r in results)
    failed = sum(r[1] for r in results)
    ignored = sum(r[2] for r in results)
    failures = [test for test, r in zip(tests, results) if r[1]]
    return passed, failed, ignored, failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated crate names")
    ap.add_argument("--full", action="store_true", help="also the crates marked `full` in crates.txt (long builds or runs; CI leaves them out)")
    ap.add_argument("--work", default=str(REPO / "target" / "ecosystem"))
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, CARGO_TARGET_DIR=os.environ.get("ECOSYSTEM_TARGET_DIR", str(work / "target")))
    only = {c for c in args.only.split(",") if c}
    listed = known()
    atexit.register(stop_all)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    rows, unexplained = [], []
    for name, version, features, services, crate_env, own, isolate, retries, full in crates():
        if only and name not in only:
            continue
        if full and not args.full and name not in only:
            continue
        started = time.monotonic()
        dst = prepare(name, version, work, own)
        built, errors = build(dst, features, env)
        built_s = time.monotonic() - started
        totals = [0, 0, 0]
        test_env = dict(env, **crate_env)
        try:
            if built:
                start_services(services, work / "services", name)
            for label, exe in sorted(built.items()):
                if label in isolate:
                    p, f, i, failures = run_isolated(exe, dst, test_env, retries)
                else:
                    p, f, i, failures = run_tests(exe, dst, test_env)
                totals[0] += p
                totals[1] += f
                totals[2] += i
                for test in failures:
                    key = f"{name} {label}::{test}"
                    if key not in listed:
                        unexplained.append(f"{key}: FAILED")
        finally:
            stop_all()
        for label, err in sorted(errors.items()):
            if label in built:
                continue
            key = f"{name} {label}"
            if key not in listed:
                unexplained.append(f"{key}: does not compile: {err}")
        compiled = len(built)
        total = compiled + len([l for l in errors if l not in built])
        run = totals[0] + totals[1]
        rate = f"{100 * totals[0] / run:.1f}%" if run else "-"
        rows.append((f"{name} {version}", f"{compiled}/{total}", *totals, rate))
        print(f"{name}: {compiled}/{total} targets compiled, {totals[0]} passed, {totals[1]} failed, {totals[2]} ignored "
              f"({built_s:.0f} s build, {time.monotonic() - started - built_s:.0f} s tests)", flush=True)
    print()
    print("| crate | test targets compiled | passed | failed | ignored | pass rate |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    if unexplained:
        print("\nnot in compat/ecosystem/known-failures.txt:")
        for line in unexplained:
            print("  " + line)
        sys.exit(1)


if __name__ == "__main__":
    main()
