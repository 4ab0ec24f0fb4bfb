//! The lab's import rule: the framework is a floor under the studies. Nothing under
//! `src/framework/` names a study, and no study names another; only the roots (`lib.rs`,
//! `cli.rs`) name studies, which is how smoke hooks and report sections reach the framework.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The first path segments after `crate::` in `text`, `use crate::{a, b::c}` groups included.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
    let mut names = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        let rest = &text[at + "crate::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                names.extend(group.split(',').map(|part| ident(part.trim())).filter(|n| !n.is_empty()));
            }
            None => {
                names.insert(ident(rest));
            }
        }
    }
    names
}

/// Top-level module of `src/` (a folder or a file) → the top-level modules it names.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::<String, BTreeSet<String>>::new();
    for file in sources(&src) {
        let top = file.strip_prefix(&src).unwrap().components().next().unwrap().as_os_str().to_string_lossy();
        let module = top.trim_end_matches(".rs").to_string();
        let named = crate_paths(&std::fs::read_to_string(&file).unwrap());
        graph.entry(module.clone()).or_default().extend(named.into_iter().filter(|n| *n != module));
    }
    graph
}

#[test]
fn the_framework_names_no_study_and_no_study_names_another() {
    let graph = edges();
    let roots = ["lib", "main", "cli"];
    let studies: BTreeSet<&String> =
        graph.keys().filter(|m| *m != "framework" && !roots.contains(&m.as_str())).collect();
    assert!(studies.len() > 20, "found too few studies: {studies:?}");
    let mut wrong = Vec::new();
    for (module, named) in &graph {
        if roots.contains(&module.as_str()) {
            continue;
        }
        for n in named.iter().filter(|n| studies.contains(n)) {
            wrong.push(format!("{module} -> {n}"));
        }
    }
    assert!(wrong.is_empty(), "edges the layering forbids: {wrong:?}");
}

#[test]
fn the_scan_sees_group_imports() {
    let names = crate_paths("use crate::{actors, framework::stats};\nlet x = crate::micro::run;");
    assert_eq!(names, ["actors", "framework", "micro"].into_iter().map(String::from).collect());
}
