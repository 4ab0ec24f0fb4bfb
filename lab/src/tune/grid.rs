//! The knobs `tune` varies and the configurations it runs: `--knob NAME=v1,v2` parsing, the
//! default grids per runtime (chosen from the machine's cores), the one-knob-at-a-time plan,
//! the optional full cartesian grid, and the interleaved run order.
//!
//! A configuration is a list of `(variable, value)` pairs; the default configuration is the
//! empty list (every knob variable *removed* from the child's environment, so a value the
//! caller happened to export does not leak into the baseline).

use std::fmt;

/// One environment variable and the values to try.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Knob {
    pub name: String,
    pub values: Vec<String>,
}

/// Environment variables set for one configuration (empty: the default).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Config {
    pub vars: Vec<(String, String)>,
}

impl Config {
    pub fn is_default(&self) -> bool {
        self.vars.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The lines that deploy this configuration (`export NAME=VALUE`).
    pub fn export_lines(&self) -> Vec<String> {
        self.vars.iter().map(|(n, v)| format!("export {n}={v}")).collect()
    }
}

/// `default`, or `NAME=V NAME2=V2`.
impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.vars.is_empty() {
            return f.write_str("default");
        }
        let parts: Vec<String> = self.vars.iter().map(|(n, v)| format!("{n}={v}")).collect();
        f.write_str(&parts.join(" "))
    }
}

/// Which program family's knobs the default grid sweeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RuntimeKind {
    Weft,
    Tokio,
    Smol,
    /// weft's knobs (the variables are ignored by programs that do not read them).
    Auto,
}

/// Parses `NAME=v1,v2,…`: NAME an environment variable name, at least one non-empty value.
pub fn parse_knob(text: &str) -> Result<Knob, String> {
    let bad =
        |why: &str| format!("bad --knob {text:?}: {why}; expected NAME=v1,v2,... (e.g. WEFT_WORKER_THREADS=1,2,4)");
    let (name, values) = text.split_once('=').ok_or_else(|| bad("no '='"))?;
    let name = name.trim();
    let valid_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid_name {
        return Err(bad("NAME must be an environment variable name (letters, digits, '_')"));
    }
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
    if values.iter().any(|v| v.is_empty()) {
        return Err(bad("empty value"));
    }
    let mut unique = Vec::new();
    for v in values {
        if !unique.contains(&v) {
            unique.push(v);
        }
    }
    Ok(Knob { name: name.to_string(), values: unique })
}

/// The knobs swept when no `--knob` is given, for a machine with `cores` cores.
pub fn default_knobs(runtime: RuntimeKind, cores: usize) -> Vec<Knob> {
    let knob = |name: &str, values: &[usize]| {
        let mut v: Vec<String> = Vec::new();
        for x in values {
            let s = x.to_string();
            if !v.contains(&s) {
                v.push(s);
            }
        }
        Knob { name: name.to_string(), values: v }
    };
    match runtime {
        RuntimeKind::Weft | RuntimeKind::Auto => vec![
            knob("WEFT_WORKER_THREADS", &[1, cores, 2 * cores]),
            knob("WEFT_MAX_BLOCKING_THREADS", &[cores, 512]),
            knob("WEFT_GLOBAL_QUEUE_INTERVAL", &[31, 61]),
            knob("WEFT_EVENT_INTERVAL", &[31, 61]),
            knob("WEFT_COMPENSATE", &[0, 1]),
        ],
        RuntimeKind::Tokio => vec![knob("TOKIO_WORKER_THREADS", &[1, cores, 2 * cores])],
        // `blocking` (smol's pool) accepts 1..=10000 and defaults to 500.
        RuntimeKind::Smol => {
            vec![knob("SMOL_THREADS", &[1, cores, 2 * cores]), knob("BLOCKING_MAX_THREADS", &[cores, 500])]
        }
    }
}

/// Checks the knob list: no name twice.
pub fn check_knobs(knobs: &[Knob]) -> Result<(), String> {
    for (i, k) in knobs.iter().enumerate() {
        if knobs[..i].iter().any(|o| o.name == k.name) {
            return Err(format!("--knob {} given twice: list all its values in one --knob", k.name));
        }
    }
    Ok(())
}

/// Round 1 of the default plan: the default, then each knob varied alone (knob order, value
/// order). Never two knobs together.
pub fn one_at_a_time(knobs: &[Knob]) -> Vec<Config> {
    let mut out = vec![Config::default()];
    for k in knobs {
        for v in &k.values {
            out.push(Config { vars: vec![(k.name.clone(), v.clone())] });
        }
    }
    out
}

/// `--full-grid`: the default, then the cartesian product of all knobs' values.
pub fn cartesian(knobs: &[Knob]) -> Vec<Config> {
    let mut grid = vec![Config::default()];
    for k in knobs {
        grid = grid
            .into_iter()
            .flat_map(|c| {
                k.values.iter().map(move |v| {
                    let mut vars = c.vars.clone();
                    vars.push((k.name.clone(), v.clone()));
                    Config { vars }
                })
            })
            .collect();
    }
    let mut out = vec![Config::default()];
    out.extend(grid);
    out
}

/// The run order of `reps` interleaved rounds over `n` configurations: `(rep, config index)`.
/// Within a rep every configuration runs once, round-robin; rep `r` starts at configuration
/// `r mod n` (so no configuration always runs first, right after a cold start or another one).
pub fn interleaved(n: usize, reps: usize) -> Vec<(usize, usize)> {
    (0..reps).flat_map(|r| (0..n).map(move |i| (r, (i + r) % n))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knob_specs_parse_and_dedupe() {
        let k = parse_knob("WEFT_WORKER_THREADS=1, 2,2,4").unwrap();
        assert_eq!(k.name, "WEFT_WORKER_THREADS");
        assert_eq!(k.values, ["1", "2", "4"]);
        for bad in ["WEFT_WORKER_THREADS", "=1", "1X=2", "A-B=1", "X=", "X=1,,2"] {
            let err = parse_knob(bad).unwrap_err();
            assert!(err.contains("expected NAME=v1,v2"), "{bad}: {err}");
        }
    }

    #[test]
    fn default_grids_follow_the_cores_and_dedupe() {
        let weft = default_knobs(RuntimeKind::Auto, 1);
        assert_eq!(weft[0].values, ["1", "2"]);
        assert_eq!(weft[1].values, ["1", "512"]);
        let weft = default_knobs(RuntimeKind::Weft, 8);
        let names: Vec<&str> = weft.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "WEFT_WORKER_THREADS",
                "WEFT_MAX_BLOCKING_THREADS",
                "WEFT_GLOBAL_QUEUE_INTERVAL",
                "WEFT_EVENT_INTERVAL",
                "WEFT_COMPENSATE"
            ]
        );
        assert_eq!(weft[0].values, ["1", "8", "16"]);
        assert_eq!(default_knobs(RuntimeKind::Tokio, 4)[0].values, ["1", "4", "8"]);
        let smol = default_knobs(RuntimeKind::Smol, 4);
        assert_eq!((smol[0].name.as_str(), smol[1].name.as_str()), ("SMOL_THREADS", "BLOCKING_MAX_THREADS"));
    }

    #[test]
    fn plans_vary_one_knob_at_a_time_or_the_full_grid() {
        let knobs = [parse_knob("A=1,2").unwrap(), parse_knob("B=x,y,z").unwrap()];
        let plan: Vec<String> = one_at_a_time(&knobs).iter().map(|c| c.to_string()).collect();
        assert_eq!(plan, ["default", "A=1", "A=2", "B=x", "B=y", "B=z"]);
        let full = cartesian(&knobs);
        assert_eq!(full.len(), 1 + 6);
        assert_eq!(full[1].to_string(), "A=1 B=x");
        assert_eq!(full[6].to_string(), "A=2 B=z");
        assert!(check_knobs(&[knobs[0].clone(), knobs[0].clone()]).unwrap_err().contains("given twice"));
    }

    #[test]
    fn interleaving_is_round_robin_and_rotates_per_rep() {
        assert_eq!(interleaved(3, 3), [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (1, 0), (2, 2), (2, 0), (2, 1)]);
    }
}
