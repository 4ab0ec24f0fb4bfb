#!/usr/bin/env python3
"""The public-API diff: tokio 1.54.1 against the `tokio` facade (weft), item by item.

Why rustdoc's JSON and not `cargo public-api`: the JSON is what the installed nightly already
writes (no tool to install, no network at CI time beyond cargo's registry), it carries the
`doc(cfg(...))` attributes that name the cargo features gating each item (tokio builds its docs
with `--cfg docsrs`), and it resolves every path in a signature to an item id, so types can be
compared by where they are reachable rather than by how the source spelled them.
`cargo public-api` renders the same JSON to text lines; comparing its lines would compare
spellings (`io::Result<T>` against `std::io::Result<T>`), and its output format is pinned to a
rustdoc JSON format version that moves with every nightly.

What is compared (the glossary of this file):
- *item*: a public path reachable from the crate root (modules walked, `pub use` followed,
  globs included, across crates for the facade's `pub use weft::*`), with its kind.
- *member*: an associated item of an inherent impl (`Type::method`, `Type::CONST`), a
  variant or public field of a type, an item of a trait (`Trait::method`, provided or required).
- *impl*: a trait implemented by a public type (Debug, From<…>, AsRawFd, AsyncRead, Stream…),
  generics normalised; blanket impls are skipped (they follow from the traits).
- *auto*: the auto traits of each public type (Send, Sync, Unpin, UnwindSafe, RefUnwindSafe),
  with the bounds rustdoc computed (`Mutex<T>: Sync where T: Send`), and negative ones.
- *signature*: argument and return types, generic bounds (inline and `where` merged and sorted,
  generic names replaced by position: `M0` for a named parameter, `I0` for an `impl Trait`
  argument, since only the first can be given by turbofish), `async`/`const`/`unsafe`, and for
  trait items provided/required. Lifetimes are not compared (elided and named lifetimes differ
  in spelling only); `T: 'static` bounds are.
- *send*: the future of every `async fn` (and `-> impl Future`) that is `Send` on tokio must be
  `Send` on weft: checked by compiling calls against both (`async_send.py`).

Each tokio key is implemented (present, same signature), listed in `gaps.txt` with a reason, or
a failure. Each weft key tokio lacks is an extra, listed in `gaps.txt` too. A line of
`gaps.txt` that matches nothing is stale and fails the run, so the file stays true.

Not seen: the auto traits of futures returned by trait methods and by callables whose generic
bounds have no stand-in type in `async_send.py` (closures, user traits); the count is printed.
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import async_send  # noqa: E402
import features  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOKIO_VERSION = "1.54.1"
# tokio's features as a user enables them for the widest API; `io-uring` and `taskdump` need
# `tokio_unstable` and stop weft's build (weft/src/lib.rs), so they are gaps by rule.
FEATURES = ["full", "test-util"]
# Impls of these std traits that weft adds (`extra std-trait-impls` in gaps.txt).
STD_TRAIT_IMPL = re.compile(
    r"^impl core::(clone::Clone|marker::Copy|cmp::(Partial)?Eq|default::Default|fmt::(Debug|Display)|error::Error) for "
)
AUTO_TRAITS = {"Send", "Sync", "Unpin", "UnwindSafe", "RefUnwindSafe"}


# ---------------------------------------------------------------------------------------------
# Producing the JSON


def rustdoc_json(work, name, dep_line, lock=None):
    """Documents the `tokio` that `dep_line` names, in a scratch project; returns the JSON paths
    of every crate documented (tokio, and for the facade weft)."""
    proj = os.path.join(work, name)
    os.makedirs(os.path.join(proj, "src"), exist_ok=True)
    with open(os.path.join(proj, "Cargo.toml"), "w") as f:
        f.write(
            f'[package]\nname = "api-diff-{name}"\nversion = "0.0.0"\nedition = "2021"\n'
            f"[workspace]\n[dependencies]\n{dep_line}\n"
        )
    with open(os.path.join(proj, "src", "lib.rs"), "w") as f:
        f.write("")
    if lock:
        shutil.copy(lock, os.path.join(proj, "Cargo.lock"))
    out = []
    crates = ["tokio"] if name == "tokio" else ["tokio", "weft"]
    for crate in crates:
        cmd = ["cargo", "+nightly", "rustdoc", "-q", "-p", crate, "--",
               "-Z", "unstable-options", "--output-format", "json", "--cfg", "docsrs"]
        if name == "tokio":
            # tokio's unstable API is documented too, so declining it is a listed decision.
            cmd += ["--cfg", "tokio_unstable"]
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(work, "target"))
        subprocess.run(cmd, cwd=proj, check=True, env=env)
        out.append(os.path.join(work, "target", "doc", crate + ".json"))
    # Each run writes tokio.json: keep the facade's apart from tokio's.
    if name == "facade":
        moved = os.path.join(work, "facade-tokio.json")
        shutil.move(out[0], moved)
        out[0] = moved
    else:
        moved = os.path.join(work, "tokio-tokio.json")
        shutil.move(out[0], moved)
        out[0] = moved
    return out


# ---------------------------------------------------------------------------------------------
# Reading the JSON


class Crates:
    """The JSON documents of one side (tokio; or the facade plus weft), addressable by
    (document, id) pairs so a `pub use` into another documented crate can be followed."""

    def __init__(self, paths):
        self.docs = []
        for p in paths:
            with open(p) as f:
                self.docs.append(json.load(f))
        self.by_name = {}
        for i, d in enumerate(self.docs):
            root = d["index"][str(d["root"])]
            self.by_name[root["name"]] = i

    def item(self, doc, id_):
        return self.docs[doc]["index"].get(str(id_))

    def resolve_external(self, doc, id_):
        """An id that is not in `doc`'s index: the same item in another loaded document."""
        summary = self.docs[doc]["paths"].get(str(id_))
        if not summary:
            return None
        path = summary["path"]
        other = self.by_name.get(path[0])
        if other is None or other == doc:
            return None
        if len(path) == 1:
            return (other, self.docs[other]["root"])
        for key, s in self.docs[other]["paths"].items():
            if s["path"] == path and s["crate_id"] == 0:
                return (other, int(key))
        return None

    def summary_path(self, doc, id_):
        summary = self.docs[doc]["paths"].get(str(id_))
        return "::".join(summary["path"]) if summary else None


def cfg_of(item):
    out = []
    for a in item.get("attrs", []):
        s = a.get("other") if isinstance(a, dict) else None
        if s and s.startswith("#[doc(cfg("):
            out.append(s[len("#[doc(cfg("):-len("))]")])
    return out


def is_windows(cfgs):
    return any(re.match(r"^(all\()?windows", c) for c in cfgs)


def is_hidden(item):
    for a in item.get("attrs", []):
        s = json.dumps(a)
        if "doc(hidden)" in s or '"hidden"' in s:
            return True
    return False


def kind_of(item):
    return next(iter(item["inner"]))


class Walk:
    """Every public path of one side, with canonical paths for type rendering."""

    def __init__(self, crates, root_doc, prefer=frozenset()):
        self.c = crates
        # Where an item has several public paths, the one tokio calls canonical names it in
        # signatures (so weft's extra shortcut `sync::Notified` does not rename tokio's
        # `sync::futures::Notified` in every key).
        self.prefer = prefer
        self.paths = {}  # path -> (doc, id, kind, cfgs)
        self.canon = {}  # (doc, id) -> shortest public path
        self.external = {}  # path -> kind, for items of crates that are not loaded (proc macros)
        d = crates.docs[root_doc]
        self._module(root_doc, d["root"], "", [], set())

    def _note(self, path, doc, id_, kind, cfgs):
        self.paths[path] = (doc, id_, kind, cfgs)
        key = (doc, id_)
        old = self.canon.get(key)
        def rank(p):
            return (p not in self.prefer, p.count("::"), p)

        if old is None or rank(path) < rank(old):
            self.canon[key] = path

    def _module(self, doc, mid, prefix, cfgs, seen):
        if (doc, mid) in seen:
            return
        seen = seen | {(doc, mid)}
        module = self.c.item(doc, mid)
        for iid in module["inner"]["module"]["items"]:
            it = self.c.item(doc, iid)
            if it is None or it["visibility"] != "public" or is_hidden(it):
                continue
            k = kind_of(it)
            icfg = cfgs + cfg_of(it)
            if k == "use":
                u = it["inner"]["use"]
                target = u["id"]
                tdoc, tid = doc, target
                titem = self.c.item(doc, target) if target is not None else None
                if titem is None and target is not None:
                    r = self.c.resolve_external(doc, target)
                    if r:
                        tdoc, tid = r
                        titem = self.c.item(tdoc, tid)
                if titem is None:
                    if not u["is_glob"]:
                        summ = self.c.docs[doc]["paths"].get(str(target)) if target is not None else None
                        self.external[prefix + u["name"]] = summ["kind"] if summ else "unknown"
                    continue
                if u["is_glob"]:
                    if kind_of(titem) == "module":
                        self._module(tdoc, tid, prefix, icfg + cfg_of(titem), seen)
                    continue
                if is_hidden(titem):
                    continue
                path = prefix + u["name"]
                tk = kind_of(titem)
                self._note(path, tdoc, tid, tk, icfg + cfg_of(titem))
                if tk == "module":
                    self._module(tdoc, tid, path + "::", icfg + cfg_of(titem), seen)
                continue
            if it["name"] is None:
                continue
            path = prefix + it["name"]
            self._note(path, doc, iid, k, icfg)
            if k == "module":
                self._module(doc, iid, path + "::", icfg, seen)


# ---------------------------------------------------------------------------------------------
# Rendering types and signatures, normalised


def sized(preds):
    """`impl<T: ?Sized> … where T: Sized` is `impl<T> …`: both spellings, one meaning."""
    preds = set(preds)
    for p in list(preds):
        if p.endswith(": core::marker::Sized"):
            lhs = p[: -len(": core::marker::Sized")]
            preds.discard(p)
            preds.discard(f"{lhs}: ?core::marker::Sized")
    return sorted(preds)


class Render:
    def __init__(self, crates, walk):
        self.c = crates
        self.w = walk

    def path_of(self, doc, id_):
        if id_ is None:
            return "?"
        p = self.w.canon.get((doc, id_))
        if p is not None:
            return "tokio::" + p
        r = self.c.resolve_external(doc, id_)
        if r:
            p = self.w.canon.get(r)
            if p is not None:
                return "tokio::" + p
        s = self.c.summary_path(doc, id_)
        if s is None:
            it = self.c.item(doc, id_)
            return "<private>::" + (it["name"] if it and it.get("name") else "_")
        first = s.split("::")[0]
        if first in self.c.by_name or first in ("tokio", "weft", "weft_macros", "tokio_macros"):
            return "<private>::" + s.split("::")[-1]
        return s

    def ty(self, doc, t, names):
        if t is None:
            return "()"
        k, v = next(iter(t.items()))
        if k == "resolved_path":
            p = self.path_of(doc, v["id"])
            args = self.args(doc, v.get("args"), names)
            if p + args == names.get("__self__"):
                return "Self"
            if p.startswith("<private>"):
                # A type a user cannot name (a private future or guard): only its auto traits
                # are observable, and `async_send.py` checks `Send`.
                return "<private>"
            # `std::io::Result<T>` is `Result<T, io::Error>`: either spelling is the same type.
            if p == "std::io::error::Result":
                inner = args[1:-1] if args else "()"
                return f"core::result::Result<{inner}, std::io::error::Error>"
            return p + args
        if k == "dyn_trait":
            traits = sorted(self.poly(doc, x, names) for x in v["traits"])
            return "dyn " + " + ".join(traits)
        if k == "generic":
            return names.get(v, v)
        if k == "primitive":
            return v
        if k == "function_pointer":
            sig = v["sig"]
            ins = ", ".join(self.ty(doc, x[1], names) for x in sig["inputs"])
            return f"fn({ins}) -> {self.ty(doc, sig['output'], names)}"
        if k == "tuple":
            return "(" + ", ".join(self.ty(doc, x, names) for x in v) + ")"
        if k == "slice":
            return "[" + self.ty(doc, v, names) + "]"
        if k == "array":
            return f"[{self.ty(doc, v['type'], names)}; {v['len']}]"
        if k == "pat":
            return self.ty(doc, v["type"], names)
        if k == "impl_trait" and "__impl_args__" in names:
            # An `impl Trait` argument is a generic parameter without a name: named like the
            # declared ones, its bounds join the where clause (so `fn f<P: AsRef<Path>>(p: P)`
            # and `fn f(p: impl AsRef<Path>)` compare equal).
            synth = names["__impl_args__"]
            n = names["__impl_count__"][0]
            names["__impl_count__"][0] += 1
            pname = synth[n] if n < len(synth) else f"S{n}"
            for b in v:
                bs = self.bound(doc, b, names)
                if bs:
                    names["__impl_bounds__"].add(f"{pname}: {bs}")
            return pname
        if k == "impl_trait":
            return "impl " + " + ".join(sorted(self.bound(doc, b, names) for b in v if self.bound(doc, b, names)))
        if k == "infer":
            return "_"
        if k == "raw_pointer":
            return ("*mut " if v["is_mutable"] else "*const ") + self.ty(doc, v["type"], names)
        if k == "borrowed_ref":
            return ("&mut " if v["is_mutable"] else "&") + self.ty(doc, v["type"], names)
        if k == "qualified_path":
            tr = self.path_of(doc, v["trait"]["id"]) if v.get("trait") else "?"
            return f"<{self.ty(doc, v['self_type'], names)} as {tr}>::{v['name']}"
        return json.dumps(t)

    def poly(self, doc, p, names):
        tr = p["trait"]
        return self.path_of(doc, tr["id"]) + self.args(doc, tr.get("args"), names)

    def args(self, doc, a, names):
        if not a:
            return ""
        if "angle_bracketed" in a:
            ab = a["angle_bracketed"]
            parts = []
            for x in ab["args"]:
                if "type" in x:
                    parts.append(self.ty(doc, x["type"], names))
                elif "const" in x:
                    parts.append(str(x["const"].get("expr")))
            for c in ab["constraints"]:
                b = c["binding"]
                if "equality" in b:
                    eq = b["equality"]
                    val = self.ty(doc, eq["type"], names) if "type" in eq else str(eq)
                    parts.append(f"{c['name']} = {val}")
                else:
                    bs = sorted(self.bound(doc, x, names) for x in b["constraint"])
                    parts.append(f"{c['name']}: " + " + ".join(x for x in bs if x))
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in a:
            pa = a["parenthesized"]
            ins = ", ".join(self.ty(doc, x, names) for x in pa["inputs"])
            out = self.ty(doc, pa["output"], names) if pa.get("output") else "()"
            return f"({ins}) -> {out}"
        return ""

    def bound(self, doc, b, names):
        if "trait_bound" in b:
            tb = b["trait_bound"]
            s = self.path_of(doc, tb["trait"]["id"]) + self.args(doc, tb["trait"].get("args"), names)
            if tb.get("modifier") == "maybe":
                s = "?" + s
            return s
        if "outlives" in b:
            return "'static" if b["outlives"] == "'static" else ""
        return ""

    def generics(self, doc, g, names):
        """The bounds of `g` as a sorted list of `P: Bound` strings (inline and where merged)."""
        preds = set()
        for p in g["params"]:
            kind = p["kind"]
            if "type" in kind and not kind["type"]["is_synthetic"]:
                for b in kind["type"]["bounds"]:
                    s = self.bound(doc, b, names)
                    if s:
                        preds.add(f"{names.get(p['name'], p['name'])}: {s}")
        for w in g["where_predicates"]:
            if "bound_predicate" in w:
                bp = w["bound_predicate"]
                lhs = self.ty(doc, bp["type"], names)
                for b in bp["bounds"]:
                    s = self.bound(doc, b, names)
                    if s:
                        preds.add(f"{lhs}: {s}")
            elif "eq_predicate" in w:
                ep = w["eq_predicate"]
                preds.add(f"{self.ty(doc, ep['lhs'], names)} == {json.dumps(ep['rhs'])[:80]}")
        return sorted(preds)

    @staticmethod
    def name_params(g, prefix, names, synthetic=False):
        names = dict(names)
        i = 0
        synth = []
        for p in g["params"]:
            if "type" in p["kind"] and p["kind"]["type"]["is_synthetic"]:
                if synthetic:
                    synth.append(f"{prefix}{i}")
                    i += 1
            elif "type" in p["kind"]:
                names[p["name"]] = f"{prefix}{i}"
                i += 1
            elif "const" in p["kind"]:
                names[p["name"]] = f"{prefix}{i}"
                i += 1
        return names

    def fn_sig(self, doc, f, names, outer_bounds=()):
        names = self.name_params(f["generics"], "M", names, synthetic=True)
        sig = f["sig"]
        # Synthetic parameters, in declaration order, for the `impl Trait` arguments.
        count = 0
        synth = []
        for p in f["generics"]["params"]:
            if "type" in p["kind"]:
                if p["kind"]["type"]["is_synthetic"]:
                    synth.append(f"I{count}")  # `impl Trait`: no turbofish
                count += 1
        arg_names = dict(names, __impl_args__=synth, __impl_count__=[0], __impl_bounds__=set())
        ins = ", ".join(self.ty(doc, x[1], arg_names) for x in sig["inputs"])
        out = self.ty(doc, sig["output"], names) if sig["output"] is not None else "()"
        h = f["header"]
        flags = "".join(w + " " for w, on in (("const", h["is_const"]), ("async", h["is_async"]),
                                              ("unsafe", h["is_unsafe"])) if on)
        bounds = sized(set(outer_bounds) | set(self.generics(doc, f["generics"], names))
                       | arg_names["__impl_bounds__"])
        where = (" where " + ", ".join(bounds)) if bounds else ""
        return f"{flags}fn({ins}) -> {out}{where}"


# ---------------------------------------------------------------------------------------------
# The API of one side: key -> (signature, cfgs, module)


def impl_names(render, doc, impl):
    """Names impl generics by their position in the self type (`impl<X> Foo<X>`: X is A0), so
    two impls spelled with different parameter names compare equal."""
    names = {}
    t = impl["for"]
    i = 0
    if "resolved_path" in t:
        a = t["resolved_path"].get("args") or {}
        for x in a.get("angle_bracketed", {}).get("args", []):
            if "type" in x and "generic" in x["type"]:
                names.setdefault(x["type"]["generic"], f"A{i}")
            i += 1
    j = 0
    for p in impl["generics"]["params"]:
        if "type" in p["kind"] and p["name"] not in names:
            names[p["name"]] = f"B{j}"
            j += 1
    names["__self__"] = render.ty(doc, t, names)
    return names


def api(crates, root_doc, prefer=frozenset(), callables=None):
    """The keys of one side; with `callables`, also fills it with the `async_send` check of
    every callable that returns a future (key -> expression, or None if not writable)."""
    walk = Walk(crates, root_doc, prefer)
    r = Render(crates, walk)
    out = {}
    out_canon = set(walk.canon.values())

    def add(key, sig, cfgs):
        # tokio's docs build holds both platforms' versions of a few methods under one name
        # (`OpenOptions::custom_flags` takes i32 on Unix, u32 on Windows): the Unix one is the API.
        if key in out and is_windows(cfgs) and not is_windows(out[key][1]):
            return
        out[key] = (sig, cfgs)

    impls_done = set()
    for path, (doc, id_, kind, cfgs) in sorted(walk.paths.items()):
        it = crates.item(doc, id_)
        inner = it["inner"][kind]
        if kind in ("struct", "enum", "union"):
            names = r.name_params(inner["generics"], "A", {})
            shape = kind
            if kind == "struct":
                shape = struct_shape(crates, doc, inner)
            add(path, f"{shape} where {', '.join(r.generics(doc, inner['generics'], names))}", cfgs)
            members(crates, r, doc, it, kind, inner, path, cfgs, add, impls_done, callables)
        elif kind == "trait":
            names = r.name_params(inner["generics"], "A", {})
            sup = sorted(x for x in (r.bound(doc, b, names) for b in inner["bounds"]) if x)
            add(path, f"trait unsafe={inner['is_unsafe']} dyn={inner['is_dyn_compatible']} "
                      f": {' + '.join(sup)} where {', '.join(r.generics(doc, inner['generics'], names))}", cfgs)
            for mid in inner["items"]:
                m = crates.item(doc, mid)
                mk = kind_of(m)
                mcfg = cfgs + cfg_of(m)
                if mk == "function":
                    f = m["inner"]["function"]
                    req = "provided" if f["has_body"] else "required"
                    add(f"{path}::{m['name']}", f"{req} " + r.fn_sig(doc, f, names), mcfg)
                elif mk == "assoc_type":
                    a = m["inner"]["assoc_type"]
                    bs = sorted(x for x in (r.bound(doc, b, names) for b in a["bounds"]) if x)
                    dflt = r.ty(doc, a["type"], names) if a.get("type") else ""
                    add(f"{path}::{m['name']}", f"type: {' + '.join(bs)} = {dflt}", mcfg)
                elif mk == "assoc_const":
                    a = m["inner"]["assoc_const"]
                    add(f"{path}::{m['name']}", f"const: {r.ty(doc, a['type'], names)}", mcfg)
            for iid in inner.get("implementations", []):
                trait_impl(crates, r, doc, iid, cfgs, add, impls_done)
        elif kind == "function":
            add(path, r.fn_sig(doc, inner, {}), cfgs)
            if callables is not None and not is_windows(cfgs):
                async_send.collect(r, doc, path, None, None, inner, callables)
        elif kind == "type_alias":
            names = r.name_params(inner["generics"], "A", {})
            add(path, "type = " + r.ty(doc, inner["type"], names), cfgs)
        elif kind == "constant":
            add(path, "const: " + r.ty(doc, inner["type"], {}), cfgs)
        elif kind == "static":
            add(path, "static: " + r.ty(doc, inner["type"], {}), cfgs)
        else:
            add(path, kind, cfgs)
    for path, kind in walk.external.items():
        add(path, kind, [])
    return out, out_canon


def merged_generics(ty, imp):
    """An impl's parameters, named as in the impl, with the type's own bounds added (by position:
    `struct Foo<T: Bound>` and `impl<U> Foo<U>`)."""
    params = [dict(p) for p in imp["generics"]["params"]]
    preds = list(imp["generics"]["where_predicates"])
    own = [p for p in ty["generics"]["params"]]
    args = ((imp["for"].get("resolved_path") or {}).get("args") or {}).get("angle_bracketed", {}).get("args", [])
    for decl, arg in zip(own, args):
        if "type" in decl["kind"] and "type" in arg and "generic" in arg["type"] and decl["kind"]["type"]["bounds"]:
            preds.append({"bound_predicate": {"type": arg["type"], "bounds": decl["kind"]["type"]["bounds"],
                                              "generic_params": []}})
    return {"params": params, "where_predicates": preds}


def struct_shape(crates, doc, inner):
    """What a user can do with a struct's shape: name public fields, or build a unit struct.
    A struct whose fields are all private has no observable shape."""
    k = inner["kind"]
    if k == "unit":
        return "struct/unit"
    if "tuple" in k:
        pub = [f for f in k["tuple"] if f is not None and crates.item(doc, f)["visibility"] == "public"]
        return f"struct/tuple{len(k['tuple'])}" if pub else "struct"
    pub = [f for f in k["plain"]["fields"] if crates.item(doc, f)["visibility"] == "public"]
    return "struct/plain" if pub else "struct"


def members(crates, r, doc, it, kind, inner, path, cfgs, add, impls_done, callables=None):
    if kind == "enum":
        for vid in inner["variants"]:
            v = crates.item(doc, vid)
            vk = v["inner"]["variant"]["kind"]
            add(f"{path}::{v['name']}", "variant/" + (vk if isinstance(vk, str) else next(iter(vk))), cfgs)
    if kind == "struct" and isinstance(inner["kind"], dict) and "plain" in inner["kind"]:
        names = r.name_params(inner["generics"], "A", {})
        for fid in inner["kind"]["plain"]["fields"]:
            fld = crates.item(doc, fid)
            if fld["visibility"] == "public":
                add(f"{path}::{fld['name']}", "field: " + r.ty(doc, fld["inner"]["struct_field"], names), cfgs)
    for iid in inner["impls"]:
        im = crates.item(doc, iid)
        imp = im["inner"]["impl"]
        if imp["blanket_impl"] is not None:
            continue
        if imp["trait"] is None:
            names = impl_names(r, doc, imp)
            outer = r.generics(doc, imp["generics"], names)
            icfg = cfgs + cfg_of(im)
            for mid in imp["items"]:
                m = crates.item(doc, mid)
                if m is None or m["visibility"] != "public" or is_hidden(m):
                    continue
                mk = kind_of(m)
                mcfg = icfg + cfg_of(m)
                if mk == "function":
                    add(f"{path}::{m['name']}", r.fn_sig(doc, m["inner"]["function"], names, outer), mcfg)
                    if callables is not None and not is_windows(mcfg):
                        async_send.collect(r, doc, f"{path}::{m['name']}", path, merged_generics(inner, imp),
                                           m["inner"]["function"], callables)
                elif mk == "assoc_const":
                    add(f"{path}::{m['name']}", "const: " + r.ty(doc, m["inner"]["assoc_const"]["type"], names), mcfg)
                elif mk == "assoc_type":
                    add(f"{path}::{m['name']}", "type", mcfg)
        else:
            trait_impl(crates, r, doc, iid, cfgs, add, impls_done)


def trait_impl(crates, r, doc, iid, cfgs, add, impls_done):
    if (doc, iid) in impls_done:
        return
    impls_done.add((doc, iid))
    im = crates.item(doc, iid)
    imp = im["inner"]["impl"]
    if imp["blanket_impl"] is not None:
        return
    tname = crates.summary_path(doc, imp["trait"]["id"]) or ""
    last = tname.split("::")[-1]
    if tname in ("core::ops::drop::Drop", "core::marker::StructuralPartialEq"):
        # With private fields, whether a type has drop glue is not observable;
        # `StructuralPartialEq` is the compiler's mark of a derived `PartialEq`.
        return
    if imp["is_synthetic"] and last not in AUTO_TRAITS:
        return  # Freeze, UnsafeUnpin: compiler-internal
    names = impl_names(r, doc, imp)
    del names["__self__"]  # the key names the type, not `Self`
    selfty = r.ty(doc, imp["for"], names)
    if selfty.startswith("<private>"):
        return
    trait = r.poly(doc, {"trait": imp["trait"]}, names)
    bounds = r.generics(doc, imp["generics"], names)
    neg = "!" if imp["is_negative"] else ""
    if imp["is_synthetic"] or (last in AUTO_TRAITS and tname.split("::")[0] in ("core", "std")):
        # Computed by the compiler or written by hand, an auto trait is the same promise.
        add(f"auto {neg}{last} for {selfty}", "where " + ", ".join(bounds), cfgs + cfg_of(im))
    else:
        add(f"impl {neg}{trait} for {selfty}", "where " + ", ".join(bounds), cfgs + cfg_of(im))


# ---------------------------------------------------------------------------------------------
# The listed gaps and the diff


class Gaps:
    """`gaps.txt`: `missing|sig|extra KEY -- reason`. KEY is a key of the report; `PATH::*`
    covers a path, what is under it and the impls on types under it; `cfg /REGEX/` covers every
    item one of whose `doc(cfg(...))` conditions the regex finds; `permissive-auto` covers each
    negative auto trait of tokio's (`!Send`, `!RefUnwindSafe`, …) where weft implements the trait,
    so every program valid on tokio stays valid; `extra std-trait-impls` covers weft's extra impls
    of std's common traits (Clone, Eq, Debug, …). The first matching line wins."""

    def __init__(self, path):
        self.rules = []
        with open(path) as f:
            for n, line in enumerate(f, 1):
                line = line.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                m = re.match(r"^(missing|sig|extra|send) (.+?) -- (.+)$", line)
                if not m:
                    sys.exit(f"{path}:{n}: expected 'missing|sig|extra|send KEY -- reason': {line}")
                self.rules.append({"kind": m.group(1), "key": m.group(2), "why": m.group(3), "line": n, "used": 0})

    def match(self, kind, key, cfgs):
        for rule in self.rules:
            if rule["kind"] != kind:
                continue
            k = rule["key"]
            hit = False
            if k.startswith("cfg /") and k.endswith("/"):
                hit = any(re.search(k[5:-1], c) for c in cfgs)
            elif k.endswith("::*"):
                base = k[:-3]
                hit = key == base or key.startswith(base + "::") or _impl_under(key, base)
            else:
                hit = key == k
            if hit:
                rule["used"] += 1
                return rule
        return None


def _impl_under(key, base):
    m = re.match(r"^(?:impl|auto) .* for tokio::(.*)$", key)
    if not m:
        return False
    ty = m.group(1).split("<")[0]
    return ty == base or ty.startswith(base + "::")


def module_of(key):
    m = re.match(r"^(?:impl|auto) .* for tokio::(.*)$", key)
    p = m.group(1) if m else key
    if not m and key.startswith(("impl ", "auto ")):
        return "(impls on other types)"
    top = p.split("::")[0].split("<")[0]
    return top if "::" in p else "(root)"


def diff(tokio, facade, gaps):
    counts = collections.defaultdict(lambda: collections.Counter())
    failures = []
    listed = []
    for key, (sig, cfgs) in sorted(tokio.items()):
        mod = module_of(key)
        counts[mod]["tokio"] += 1
        if key in facade:
            if facade[key][0] == sig:
                counts[mod]["implemented"] += 1
                continue
            rule = gaps.match("sig", key, cfgs)
            if rule:
                counts[mod]["listed"] += 1
                listed.append(("sig", key, rule["why"]))
            else:
                counts[mod]["failing"] += 1
                failures.append(f"signature differs: {key}\n    tokio: {sig}\n    weft:  {facade[key][0]}")
            continue
        rule = gaps.match("missing", key, cfgs)
        if rule is None and key.startswith("auto !") and "auto " + key[len("auto !"):] in facade:
            rule = gaps.match("missing", "permissive-auto", [])
        if rule:
            counts[mod]["listed"] += 1
            listed.append(("missing", key, rule["why"]))
        else:
            counts[mod]["failing"] += 1
            cfg = f"  [{'; '.join(sorted(set(cfgs)))}]" if cfgs else ""
            failures.append(f"missing: {key}  ({sig}){cfg}")
    extras = []
    for key, (sig, cfgs) in sorted(facade.items()):
        if key in tokio:
            continue
        rule = gaps.match("extra", key, cfgs)
        if rule is None and key.startswith("auto ") and "auto !" + key[len("auto "):] in tokio:
            continue  # counted once, as the tokio side's negative impl (`permissive-auto`)
        if rule is None and key.startswith("auto !") and "auto " + key[len("auto !"):] in tokio:
            continue  # counted once, as the tokio side's positive impl that weft lacks
        if rule is None and STD_TRAIT_IMPL.match(key):
            rule = gaps.match("extra", "std-trait-impls", [])
        if rule:
            extras.append((key, rule["why"]))
        else:
            failures.append(f"extra, not listed: {key}  ({sig})")
    return counts, failures, listed, extras


def stale_lines(gaps):
    return [f"gaps.txt:{r['line']}: matches nothing (implemented now? remove it): {r['kind']} {r['key']}"
            for r in gaps.rules if r["used"] == 0]


def report(counts, failures, listed, extras, out_dir):
    rows = sorted(counts.items())
    total = collections.Counter()
    lines = ["| module | tokio items | implemented | listed | failing |", "|---|---:|---:|---:|---:|"]
    for mod, c in rows:
        total.update(c)
        lines.append(f"| {mod} | {c['tokio']} | {c['implemented']} | {c['listed']} | {c['failing']} |")
    lines.append(f"| **all** | **{total['tokio']}** | **{total['implemented']}** | **{total['listed']}** | **{total['failing']}** |")
    table = "\n".join(lines)
    by_reason = collections.Counter(why for _, _, why in listed)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write("# tokio 1.54.1 against the facade\n\n" + table + "\n\n")
        f.write(f"Extras (weft's, under `tokio::`, listed): {len(extras)}\n\n## Listed, by reason\n\n")
        for why, n in by_reason.most_common():
            f.write(f"- {n}: {why}\n")
        f.write("\n## Listed items\n\n")
        for kind, key, why in listed:
            f.write(f"- {kind} `{key}`: {why}\n")
        f.write("\n## Extras\n\n")
        for key, why in extras:
            f.write(f"- `{key}`: {why}\n")
        if failures:
            f.write("\n## Failures\n\n" + "\n".join(failures) + "\n")
    return table, total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "api-diff"))
    ap.add_argument("--gaps", default=os.path.join(HERE, "gaps.txt"))
    ap.add_argument("--dump", action="store_true", help="write both sides' keys and signatures to --work")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    # tokio's side is locked too (`tokio.Cargo.lock`), so a new `bytes` or `mio` cannot move
    # the paths its signatures name between two runs.
    tokio_dep = f'tokio = {{ version = "={TOKIO_VERSION}", features = {json.dumps(FEATURES)} }}'
    tokio_lock = os.path.join(HERE, "tokio.Cargo.lock")
    facade_dep = f'tokio = {{ path = "{os.path.join(ROOT, "compat", "tokio")}", features = {json.dumps(FEATURES)} }}'
    facade_lock = os.path.join(ROOT, "Cargo.lock")
    tokio_json = rustdoc_json(args.work, "tokio", tokio_dep, lock=tokio_lock)
    facade_json = rustdoc_json(args.work, "facade", facade_dep, lock=facade_lock)
    callables = {}
    tokio, tokio_canon = api(Crates(tokio_json), 0, callables=callables)
    facade, _ = api(Crates(facade_json), 0, prefer=tokio_canon)
    if args.dump:
        for name, side in (("tokio", tokio), ("facade", facade)):
            with open(os.path.join(args.work, name + ".txt"), "w") as f:
                for k, (s, c) in sorted(side.items()):
                    f.write(f"{k}\t{s}\t{'; '.join(c)}\n")
    gaps = Gaps(args.gaps)
    counts, failures, listed, extras = diff(tokio, facade, gaps)
    # The futures of the callables both sides agree on; the others are already a listed gap.
    same = {k: v for k, v in callables.items() if k in facade and facade[k][0] == tokio[k][0]}
    checked, skipped, not_send, send_failing = async_send.run(args.work, same, tokio_dep, tokio_lock,
                                                              facade_dep, facade_lock)
    for key in send_failing:
        rule = gaps.match("send", key, [])
        if rule:
            listed.append(("send", key, rule["why"]))
        else:
            failures.append(f"future not Send on weft (Send on tokio), or the call fails: {key}  "
                            f"(send({same[key]}))")
    failures += stale_lines(gaps)
    failures += features.check(os.path.join(args.work, "tokio"), dict(os.environ, CARGO_TARGET_DIR=os.path.join(args.work, "target")), ROOT)
    table, total = report(counts, failures, listed, extras, args.work)
    print(table)
    print(f"\nfutures of async fns: {len(checked)} Send on tokio checked on weft, {len(send_failing)} not Send "
          f"there; {len(not_send)} not Send on tokio either (or not writable), {len(skipped)} not checked "
          f"(bounds with no stand-in type: closures, user traits)")
    kinds = collections.Counter(why.split(":")[0] for _, _, why in listed)
    print("\nlisted, by kind: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()))
    print(f"tokio {TOKIO_VERSION}: {total['tokio']} keys; implemented {total['implemented']}, "
          f"listed {total['listed']}, failing {total['failing']}; weft extras listed {len(extras)}; "
          f"report: {os.path.relpath(os.path.join(args.work, 'report.md'), ROOT)}")
    if failures:
        print(f"\n{len(failures)} unlisted differences (add the item to weft, or a line to "
              f"{os.path.relpath(args.gaps, ROOT)} with its reason):", file=sys.stderr)
        for f in failures[:400]:
            print("  " + f, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
