#!/usr/bin/env python3
"""Checks that every name ARCHITECTURE.md puts in backticks still exists in the repository.

Usage: .ci/architecture-names.py [FILE]   (default: ARCHITECTURE.md at the repository root)

Each backticked span is classified:
* a path (contains `/`, or ends in .rs/.md/.toml/.sh/.py/.txt): it must exist, relative to the
  repository root, or under some crate's `src/` (`runtime/park.rs`), or as the tail of a file
  or folder path on a component boundary (`multi_thread/worker.rs`, `mod.rs`). A trailing `/`
  names a folder; `*`, `?` and `{a,b}` are globs. Spans starting with `/` (system paths, URL
  paths) are not repository paths and are skipped.
* a command (`cargo …`, `git …`, `weft-lab …`), a flag (`--x`), or a span without any
  identifier (a number): skipped. For an environment assignment (`WEFT_X=0`) the variable
  name is checked.
* anything else is code: every identifier in it (`Foo`, `foo_bar`, each part of
  `Foo::bar()`, the names inside generics, `select!` without its `!`) must occur as a whole
  word in some file of the repository other than ARCHITECTURE.md. String literals and
  lifetimes are ignored.

Files are `git ls-files --cached --others --exclude-standard` that exist in the working tree,
so files being moved (staged renames, new untracked files) count where they are now.

Prints each unresolved span with its line number and exits 1; exits 0 with a one-line summary
when every span resolves; exits 2 on a usage or environment error.
"""

import fnmatch
import os
import re
import subprocess
import sys

PATH_EXTENSIONS = (".rs", ".md", ".toml", ".sh", ".py", ".txt")
COMMAND_WORDS = {
    "cargo", "git", "python3", "python", "bash", "sh", "weft-lab", "rustup", "valgrind",
    "ulimit", "tmux", "strace", "perf", "promtool", "rustc", "RUSTFLAGS",
}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SPAN = re.compile(r"`([^`\n]+)`")
ENV_ASSIGNMENT = re.compile(r"^([A-Z_][A-Z0-9_]*)=\S*$")


def repo_root():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"], cwd=here, check=True, capture_output=True, text=True
        )
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"architecture-names: not in a git repository ({e})")
    return out.stdout.strip()


def repo_files(root):
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, check=True, capture_output=True,
    )
    names = {n.decode("utf-8", "replace") for n in out.stdout.split(b"\0") if n}
    return sorted(n for n in names if os.path.isfile(os.path.join(root, n)))


def word_set(root, files, exclude):
    words = set()
    for name in files:
        if name in exclude:
            continue
        try:
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue  # binary
        words.update(IDENT.findall(data.decode("utf-8", "ignore")))
    return words


def expand_braces(pattern):
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [pattern]
    out = []
    for alt in m.group(1).split(","):
        out.extend(expand_braces(pattern[: m.start()] + alt + pattern[m.end():]))
    return out


def looks_like_path(span):
    if " " in span:
        return False
    return "/" in span or span.endswith(PATH_EXTENSIONS)


def path_missing(span, files, dirs):
    """The alternatives of `span` (one unless it has `{a,b}`) that name no file or folder."""
    is_dir = span.endswith("/")
    pool = dirs if is_dir else files | dirs
    missing = []
    for pattern in expand_braces(span.rstrip("/")):
        if any(c in pattern for c in "*?["):
            # A glob: at the root, under a crate's src, or as a tail.
            if not any(fnmatch.fnmatchcase(c, pattern)
                       or fnmatch.fnmatchcase(c, "*/src/" + pattern)
                       or fnmatch.fnmatchcase(c, "*/" + pattern) for c in pool):
                missing.append(pattern)
        elif pattern not in pool and not any(c.endswith("/" + pattern) for c in pool):
            missing.append(pattern)
    return missing


def code_identifiers(span):
    text = re.sub(r'"(?:[^"\\]|\\.)*"', " ", span)  # string literals
    text = re.sub(r"'[A-Za-z_][A-Za-z0-9_]*\b(?!')", " ", text)  # lifetimes
    return IDENT.findall(text)


def classify(span):
    """Returns ("skip", None), ("path", span) or ("names", [identifiers])."""
    s = span.strip()
    if not s:
        return "skip", None
    if s.startswith("/") or "://" in s:
        return "skip", None
    if s.startswith("-"):
        return "skip", None
    first = s.split()[0]
    if first in COMMAND_WORDS or first.split("=")[0] in COMMAND_WORDS:
        return "skip", None
    m = ENV_ASSIGNMENT.match(s)
    if m:
        return "names", [m.group(1)]
    if looks_like_path(s):
        return "path", s
    names = code_identifiers(s)
    if not names:
        return "skip", None
    return "names", names


def main():
    root = repo_root()
    doc = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "ARCHITECTURE.md")
    if len(sys.argv) > 2:
        sys.exit("usage: architecture-names.py [FILE]")
    try:
        with open(doc, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        sys.exit(f"architecture-names: {e}")

    files = repo_files(root)
    exclude = {"ARCHITECTURE.md"}
    doc_rel = os.path.relpath(os.path.abspath(doc), root)
    if not doc_rel.startswith(".."):
        exclude.add(doc_rel)
    words = word_set(root, files, exclude)
    file_set = set(files)
    dirs = set()
    for name in files:
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))

    checked = 0
    failures = []
    in_fence = False
    for lineno, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if line.count("`") % 2:
            failures.append((lineno, line.strip(), "unbalanced backtick (a span may not cross lines)"))
            continue
        for span in SPAN.findall(line):
            kind, value = classify(span)
            if kind == "skip":
                continue
            checked += 1
            if kind == "path":
                missing = path_missing(value, file_set, dirs)
                if missing:
                    failures.append((lineno, span, "no such file or folder: " + ", ".join(missing)))
            else:
                missing = sorted({n for n in value if n not in words})
                if missing:
                    failures.append((lineno, span, "not found in the repository: " + ", ".join(missing)))

    name = os.path.relpath(doc, os.getcwd())
    for lineno, span, why in failures:
        print(f"{name}:{lineno}: `{span}`: {why}")
    if failures:
        print(f"{len(failures)} of {checked} names in {name} do not resolve")
        return 1
    print(f"{checked} names checked, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
