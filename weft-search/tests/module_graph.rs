//! weft-search's modules import one another without a circle: `crate::X` references between
//! the top-level modules of `src/` form a directed acyclic graph (a module's submodules count
//! as the module; `lib.rs` and `main.rs`, which wire everything, are left out).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module name → the modules it names through `crate::`.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::<String, BTreeSet<String>>::new();
    let mut visit = vec![src.clone()];
    while let Some(dir) = visit.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                visit.push(path);
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let module =
                rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
            if module == "lib" || module == "main" || path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let names = graph.entry(module.clone()).or_default();
            for (i, _) in text.match_indices("crate::") {
                let rest = &text[i + "crate::".len()..];
                let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                let braced = rest.starts_with('{');
                if braced {
                    let inner = &rest[1..rest.find('}').unwrap_or(rest.len())];
                    for part in inner.split(',') {
                        let n = part.trim().split("::").next().unwrap_or("").trim().to_string();
                        if !n.is_empty() && n != module && n != "self" {
                            names.insert(n);
                        }
                    }
                } else if !name.is_empty() && name != module {
                    names.insert(name);
                }
            }
        }
    }
    // Only edges to modules that exist (not to items re-exported at the crate root).
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for names in graph.values_mut() {
        names.retain(|n| modules.contains(n));
    }
    graph
}

#[test]
fn the_module_graph_has_no_circle() {
    let graph = edges();
    assert!(graph.len() > 5, "found too few modules: {graph:?}");
    // Depth-first search with colours: reaching a module on the current path is a circle.
    fn visit(m: &str, g: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) {
        if done.contains(m) {
            return;
        }
        if let Some(at) = path.iter().position(|p| p == m) {
            panic!("import circle: {} -> {m}", path[at..].join(" -> "));
        }
        path.push(m.to_string());
        for n in &g[m] {
            visit(n, g, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
}
