"""Reads one conformance run (run.sh's output folder) and prints the table.

Usage: report.py OUT_DIR KNOWN_FAILURES EXCLUDED TOKIO_VERSION [RESULTS_MD]

With RESULTS_MD (run.sh passes it on a run of every file), the table, the date and each failure
with its reason are also written there: `conformance/RESULTS.md` is the one place the figures
live; README.md and known-failures.txt point to it instead of repeating them.

A file *compiled* when cargo produced its test binary; it *fully passes* when the binary
exited 0 within the time limit. Each failing test and each file that did not compile is
printed with its reason from known-failures.txt (`file: reason` for a file, `file::test:
reason` for a test), or with UNLISTED and the compiler's / test's first error line.
"""

import datetime
import json
import os
import re
import sys

out, known_path, excluded_path, version = sys.argv[1:5]
results_md = sys.argv[5] if len(sys.argv) > 5 else None


def read_list(path):
    entries = {}
    for line in open(path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, reason = line.partition(": ")
        entries[key.strip()] = reason.strip()
    return entries


known = read_list(known_path)
excluded = read_list(excluded_path)
included = [l.strip() for l in open(os.path.join(out, "included.txt")) if l.strip()]
built = dict(l.split(" ", 1) for l in open(os.path.join(out, "built.txt")).read().splitlines() if l)

# First compiler error per target, and how many: run.sh renders diagnostics to build.log,
# where each target's errors precede its "could not compile ... (test "NAME")" line.
errors = {}
pending = []
for line in open(os.path.join(out, "build.log"), errors="replace"):
    m = re.match(r"error(\[E\d+\])?: (.*)", line)
    if m and not m.group(2).startswith(("could not compile", "aborting due to")):
        pending.append(m.group(2).strip())
    m = re.search(r'could not compile `[^`]*` \(test "([^"]+)"\)', line)
    if m:
        errors[m.group(1)] = pending
        pending = []

files_compiled = files_passing = passed = failed = ignored = 0
problems = []  # (key, detail)
for name in included:
    if name not in built:
        errs = errors.get(name, [])
        first = errs[0] if errs else "no binary (see build.log)"
        problems.append((name, f"does not compile ({len(errs)} errors; first: {first})"))
        continue
    files_compiled += 1
    log = open(os.path.join(out, "logs", name + ".log"), errors="replace").read()
    rc = int(open(os.path.join(out, "logs", name + ".rc")).read().strip() or 1)
    results = re.findall(r"^test (\S+) \.\.\. (ok|FAILED|ignored)", log, re.M)
    file_failed = 0
    for test, status in results:
        if status == "ok":
            passed += 1
        elif status == "ignored":
            ignored += 1
        else:
            failed += 1
            file_failed += 1
            m = re.search(r"---- " + re.escape(test) + r" stdout ----\n(?:.*\n)*?.*panicked at [^\n]*\n([^\n]*)", log)
            problems.append((f"{name}::{test}", "fails: " + (m.group(1)[:160] if m else "see log")))
    if rc == 0:
        files_passing += 1
    elif rc in (124, 137):
        failed += 1
        problems.append((name, f"timed out ({len(results)} tests had reported)"))
    elif file_failed == 0:
        failed += 1
        problems.append((name, f"test binary exited {rc} ({len(results)} tests had reported)"))

n = len(included)
pct = lambda a, b: f"{100.0 * a / b:.1f}%" if b else "n/a"
table = [
    f"tokio {version} integration tests against weft (`tokio = {{ package = \"weft\" }}`)",
    "",
    "| files included | compiled | fully passing | tests passed | tests failed | ignored |",
    "|---|---|---|---|---|---|",
    f"| {n} | {files_compiled} ({pct(files_compiled, n)}) | {files_passing} | "
    f"{passed} ({pct(passed, passed + failed)}) | {failed} | {ignored} |",
]
print()
print("\n".join(table))
print()
print(f"excluded ({len(excluded)}, see conformance/excluded.txt): "
      + ", ".join(f"{k}" for k in sorted(excluded)))
print()
unlisted = 0
print("failures (reason from conformance/known-failures.txt, or UNLISTED):")
for key, detail in problems:
    reason = known.get(key)
    if reason is None:
        unlisted += 1
        print(f"  {key}: UNLISTED: {detail}")
    else:
        print(f"  {key}: {reason}")
stale = [k for k in known if not any(k == p[0] for p in problems)]
if stale:
    print("listed in known-failures.txt but now passing: " + ", ".join(stale))
if results_md:
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    with open(results_md, "w") as f:
        f.write("# Conformance: the last run of every file\n\n")
        f.write(f"Written by `conformance/run.sh` (with no filter) on {when}; the figures README.md quotes "
                "come from here.\n\n")
        f.write("\n".join(table) + "\n\n")
        f.write(f"Excluded ({len(excluded)}, with reasons in `conformance/excluded.txt`).\n\n")
        f.write(f"Failures ({len(problems)}; {unlisted} not yet in `conformance/known-failures.txt`):\n\n")
        for key, detail in problems:
            f.write(f"- `{key}`: {known.get(key) or 'UNLISTED: ' + detail}\n")
    print(f"wrote {os.path.relpath(results_md)}")
if unlisted and os.environ.get("CONFORMANCE_STRICT") == "1":
    sys.exit(1)
