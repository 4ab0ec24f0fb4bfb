"""The auto trait rustdoc cannot show: is the future of each `async fn` (or `-> impl Future`)
`Send` on weft wherever it is on tokio?

A user's `tokio::spawn(async move { stream.peek(&mut buf).await })` needs `peek`'s future to be
`Send`. rustdoc's JSON says only `async`; so this generates one small crate with a check per
callable — `send(<tokio::net::TcpStream>::peek(todo!(), todo!()))` — and lets the compiler
decide. Generic parameters get a concrete type chosen by their bounds (`AsRef<Path>`: `&str`,
`AsyncRead`: `tokio::fs::File`, …); a callable whose bounds have no such type (closures,
user traits) is not checked, and counted.

The crate is compiled against real tokio first; a check that does not compile there (tokio's
future is not `Send`, or the substitution does not fit) is dropped, so every check left is a
promise tokio makes. The same crate is then compiled against the facade: each error is a future
that is `Send` on tokio and not on weft (or a call that does not resolve), and fails the run
unless `gaps.txt` lists it as `send KEY -- reason`.
"""

import json
import os
import re
import shutil
import subprocess

# A concrete type for a generic parameter, by the first bound that has one. A bound in
# NEUTRAL is met by `u8` (or by the type another bound chose).
SUBST = [
    ("core::convert::AsRef<std::path::Path>", "&'static str"),
    ("core::convert::AsRef<[u8]>", "Vec<u8>"),
    ("tokio::net::ToSocketAddrs", "&'static str"),
    ("std::os::fd::raw::AsRawFd", "std::net::TcpStream"),
    ("bytes::buf::buf_mut::BufMut", "Vec<u8>"),
    ("bytes::buf::buf_impl::Buf", "std::io::Cursor<Vec<u8>>"),
    ("tokio::io::AsyncBufRead", "tokio::io::BufReader<tokio::fs::File>"),
    ("tokio::io::AsyncRead", "tokio::fs::File"),
    ("tokio::io::AsyncWrite", "tokio::fs::File"),
    ("tokio::io::AsyncSeek", "tokio::fs::File"),
    ("core::future::future::Future", "std::future::Ready<u8>"),
    ("core::future::into_future::IntoFuture", "std::future::Ready<u8>"),
]
NEUTRAL = re.compile(
    r"^(\?)?core::marker::(Send|Sync|Unpin|Sized|Copy)$|^'static$|^core::clone::Clone$|"
    r"^core::fmt::(Debug|Display)$|^core::default::Default$|^core::cmp::(Partial)?(Eq|Ord)$|"
    r"^core::hash::Hash$"
)


def subst_for(bounds):
    """A type meeting every bound in `bounds`, or None."""
    chosen = None
    for b in bounds:
        for needle, ty in SUBST:
            if b.startswith(needle):
                if chosen not in (None, ty):
                    return None
                chosen = ty
                break
        else:
            if not NEUTRAL.match(b):
                return None
    return chosen or "u8"


def param_bounds(r, doc, generics):
    """Each type parameter of `generics` (in order) with its bounds, inline and `where`."""
    out = {}
    order = []
    for p in generics["params"]:
        k = p["kind"]
        if "type" in k:
            order.append((p["name"], k["type"]["is_synthetic"]))
            out[p["name"]] = [x for x in (r.bound(doc, b, {}) for b in k["type"]["bounds"]) if x]
        elif "const" in k:
            order.append((p["name"], None))
        else:
            order.append((p["name"], "lifetime"))
    for w in generics["where_predicates"]:
        bp = w.get("bound_predicate")
        if bp and "generic" in bp["type"] and bp["type"]["generic"] in out:
            out[bp["type"]["generic"]] += [x for x in (r.bound(doc, b, {}) for b in bp["bounds"]) if x]
    return order, out


def returns_future(f):
    if f["header"]["is_async"]:
        return True
    out = f["sig"]["output"]
    return bool(out and "impl_trait" in out and "Future" in json.dumps(out))


def call(r, doc, key, owner, owner_generics, f):
    """The checked expression for one callable, or None when it cannot be written."""
    parts = []
    if owner is not None:
        order, bounds = param_bounds(r, doc, owner_generics)
        args = []
        for name, kind in order:
            if kind == "lifetime":
                args.append("'_")
            elif kind is None:
                return None
            else:
                s = subst_for(bounds[name])
                if s is None:
                    return None
                args.append(s)
        parts.append(f"<tokio::{owner}{'<' + ', '.join(args) + '>' if args else ''}>::{key.split('::')[-1]}")
    else:
        parts.append(f"tokio::{key}")
    order, bounds = param_bounds(r, doc, f["generics"])
    turbofish, synthetic = [], []
    for name, kind in order:
        if kind == "lifetime":
            continue
        if kind is None:
            return None
        s = subst_for(bounds[name])
        if s is None:
            return None
        (synthetic if kind else turbofish).append(s)
    if turbofish:
        parts.append("::<" + ", ".join(turbofish) + ">")
    args = []
    for _, ty in f["sig"]["inputs"]:
        base, amp = ty, ""
        if "borrowed_ref" in ty:
            base = ty["borrowed_ref"]["type"]
            amp = "&mut " if ty["borrowed_ref"]["is_mutable"] else "&"
        if "impl_trait" in base:
            if not synthetic:
                return None
            args.append(f"{{ let x: {amp}{synthetic.pop(0)} = todo!(); x }}")
        else:
            args.append("todo!()")
    return "".join(parts) + "(" + ", ".join(args) + ")"


def collect(r, doc, key, owner, owner_generics, f, out):
    if returns_future(f):
        out[key] = call(r, doc, key, owner, owner_generics, f)


def source(checks):
    lines = ["#![allow(unreachable_code, unused, clippy::all)]", "fn send<T: Send>(_: T) {}", ""]
    where = {}
    for i, (key, expr) in enumerate(sorted(checks.items())):
        where[len(lines) + 1] = key
        lines.append(f"fn check_{i}() {{ send({expr}); }}")
    return "\n".join(lines) + "\n", where


def compile_errors(proj, dep_line, lock, checks, target):
    """The keys whose check line does not compile in a crate depending on `dep_line`."""
    os.makedirs(os.path.join(proj, "src"), exist_ok=True)
    with open(os.path.join(proj, "Cargo.toml"), "w") as fh:
        fh.write('[package]\nname = "api-diff-send"\nversion = "0.0.0"\nedition = "2021"\n'
                 f"[workspace]\n[dependencies]\n{dep_line}\n")
    if lock:
        shutil.copy(lock, os.path.join(proj, "Cargo.lock"))
    text, where = source(checks)
    with open(os.path.join(proj, "src", "lib.rs"), "w") as fh:
        fh.write(text)
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    res = subprocess.run(["cargo", "check", "-q", "--message-format=json"], cwd=proj, env=env,
                         capture_output=True, text=True)
    bad = set()
    for line in res.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        m = msg.get("message") or {}
        if msg.get("reason") != "compiler-message" or m.get("level") != "error":
            continue
        for span in m.get("spans", []):
            if span["file_name"].endswith("src/lib.rs") and span["line_start"] in where:
                bad.add(where[span["line_start"]])
        if not m.get("spans") and "aborting" not in m.get("message", ""):
            raise SystemExit(f"the Send check crate failed without a span: {m.get('rendered')}")
    if res.returncode != 0 and not bad:
        raise SystemExit(f"the Send check crate failed to build:\n{res.stderr[-3000:]}")
    return bad


def run(work, checks, tokio_dep, tokio_lock, facade_dep, facade_lock):
    """Returns (checked, skipped, not Send on tokio, failing on weft) as key collections."""
    writable = {k: v for k, v in checks.items() if v}
    skipped = sorted(k for k, v in checks.items() if not v)
    target = os.path.join(work, "target-send")
    dropped = set()
    for _ in range(8):
        bad = compile_errors(os.path.join(work, "send-tokio"), tokio_dep, tokio_lock,
                             {k: v for k, v in writable.items() if k not in dropped}, target)
        if not bad:
            break
        dropped |= bad
    else:
        raise SystemExit("the Send check crate still fails against tokio after 8 rounds")
    kept = {k: v for k, v in writable.items() if k not in dropped}
    failing = compile_errors(os.path.join(work, "send-facade"), facade_dep, facade_lock, kept, target)
    return sorted(kept), skipped, sorted(dropped), sorted(failing)
