//! Builder knobs from the environment (`WEFT_*`), so a deployed program can be tuned without
//! a rebuild (and `weft-lab tune` can sweep them).
//!
//! Precedence: an explicit `Builder` call > the environment > the default. The variables are
//! read once per `build()`; a malformed value fails `build()` with `io::ErrorKind::InvalidInput`
//! naming the variable, rather than being ignored (a typo in a deployment should be loud).
//! An empty value counts as unset. Parsing is a pure function of a lookup closure so tests
//! never touch the process environment.

use std::io;
use std::time::Duration;

pub(crate) const WORKER_THREADS: &str = "WEFT_WORKER_THREADS";
pub(crate) const MAX_BLOCKING_THREADS: &str = "WEFT_MAX_BLOCKING_THREADS";
pub(crate) const BLOCKING_KEEP_ALIVE_MS: &str = "WEFT_BLOCKING_KEEP_ALIVE_MS";
pub(crate) const GLOBAL_QUEUE_INTERVAL: &str = "WEFT_GLOBAL_QUEUE_INTERVAL";
pub(crate) const EVENT_INTERVAL: &str = "WEFT_EVENT_INTERVAL";
pub(crate) const LONG_POLL_THRESHOLD_MS: &str = "WEFT_LONG_POLL_THRESHOLD_MS";
pub(crate) const COMPENSATE: &str = "WEFT_COMPENSATE";
pub(crate) const TASK_ARENA: &str = "WEFT_TASK_ARENA";

/// The knobs the environment set (each `None` when its variable is unset or empty).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct EnvConfig {
    pub(crate) worker_threads: Option<usize>,
    pub(crate) max_blocking_threads: Option<usize>,
    pub(crate) blocking_keep_alive: Option<Duration>,
    pub(crate) global_queue_interval: Option<u32>,
    pub(crate) event_interval: Option<u32>,
    /// `0` turns long-poll detection (and so compensation) off.
    pub(crate) long_poll_threshold: Option<Duration>,
    pub(crate) compensate: Option<bool>,
    pub(crate) task_arena: Option<bool>,
}

impl EnvConfig {
    /// Reads the process environment.
    pub(crate) fn from_env() -> io::Result<EnvConfig> {
        EnvConfig::parse(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// Reads the variables through `lookup` (name → value).
    pub(crate) fn parse(lookup: impl Fn(&str) -> Option<String>) -> io::Result<EnvConfig> {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let positive = |name: &str| -> io::Result<Option<u64>> {
            get(name)
                .map(|v| match v.parse::<u64>() {
                    Ok(n) if n > 0 => Ok(n),
                    _ => Err(invalid(name, &v, "a positive integer")),
                })
                .transpose()
        };
        let millis = |name: &str| -> io::Result<Option<Duration>> {
            get(name)
                .map(|v| {
                    v.parse::<u64>()
                        .map(Duration::from_millis)
                        .map_err(|_| invalid(name, &v, "a whole number of milliseconds"))
                })
                .transpose()
        };
        let interval = |name: &str| -> io::Result<Option<u32>> {
            positive(name)?
                .map(|n| u32::try_from(n).map_err(|_| invalid(name, &n.to_string(), "a positive integer below 2^32")))
                .transpose()
        };
        let switch = |name: &str| -> io::Result<Option<bool>> {
            get(name)
                .map(|v| match v.to_ascii_lowercase().as_str() {
                    "1" | "true" | "on" | "yes" => Ok(true),
                    "0" | "false" | "off" | "no" => Ok(false),
                    _ => Err(invalid(name, &v, "1/0, true/false, on/off or yes/no")),
                })
                .transpose()
        };
        Ok(EnvConfig {
            worker_threads: positive(WORKER_THREADS)?.map(|n| n as usize),
            max_blocking_threads: positive(MAX_BLOCKING_THREADS)?.map(|n| n as usize),
            blocking_keep_alive: millis(BLOCKING_KEEP_ALIVE_MS)?,
            global_queue_interval: interval(GLOBAL_QUEUE_INTERVAL)?,
            event_interval: interval(EVENT_INTERVAL)?,
            long_poll_threshold: millis(LONG_POLL_THRESHOLD_MS)?,
            compensate: switch(COMPENSATE)?,
            task_arena: switch(TASK_ARENA)?,
        })
    }
}

fn invalid(name: &str, value: &str, expected: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("environment variable {name}={value:?} is invalid: expected {expected} (unset it to use the default)"),
    )
}

/// The fuzz target's entry (`fuzz/fuzz_targets/env_config.rs`): parses variables given as
/// `NAME=value` lines (the last one of a name wins). Not part of weft's API.
#[doc(hidden)]
pub fn fuzz_parse(lines: &str) -> io::Result<String> {
    let vars: Vec<(&str, &str)> = lines.lines().filter_map(|l| l.split_once('=')).collect();
    let lookup = |name: &str| vars.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v.to_string());
    EnvConfig::parse(lookup).map(|c| format!("{c:?}"))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> io::Result<EnvConfig> {
        EnvConfig::parse(|name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn unset_and_empty_are_none() {
        assert_eq!(parse(&[]).unwrap(), EnvConfig::default());
        assert_eq!(parse(&[(WORKER_THREADS, ""), (COMPENSATE, "  ")]).unwrap(), EnvConfig::default());
    }

    #[test]
    fn every_variable_parses() {
        let c = parse(&[
            (WORKER_THREADS, "3"),
            (MAX_BLOCKING_THREADS, "7"),
            (BLOCKING_KEEP_ALIVE_MS, "250"),
            (GLOBAL_QUEUE_INTERVAL, "17"),
            (EVENT_INTERVAL, " 11 "),
            (LONG_POLL_THRESHOLD_MS, "0"),
            (COMPENSATE, "Off"),
            (TASK_ARENA, "no"),
        ])
        .unwrap();
        assert_eq!(
            c,
            EnvConfig {
                worker_threads: Some(3),
                max_blocking_threads: Some(7),
                blocking_keep_alive: Some(Duration::from_millis(250)),
                global_queue_interval: Some(17),
                event_interval: Some(11),
                long_poll_threshold: Some(Duration::ZERO),
                compensate: Some(false),
                task_arena: Some(false),
            }
        );
    }

    #[test]
    fn malformed_values_name_the_variable() {
        for (name, value) in [
            (WORKER_THREADS, "0"),
            (WORKER_THREADS, "four"),
            (MAX_BLOCKING_THREADS, "-1"),
            (BLOCKING_KEEP_ALIVE_MS, "1.5"),
            (GLOBAL_QUEUE_INTERVAL, "4294967296"),
            (EVENT_INTERVAL, "0"),
            (LONG_POLL_THRESHOLD_MS, "10ms"),
            (COMPENSATE, "maybe"),
            (TASK_ARENA, "2"),
        ] {
            let err = parse(&[(name, value)]).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{name}={value}");
            let msg = err.to_string();
            assert!(msg.contains(name) && msg.contains(value), "{name}={value}: {msg}");
        }
    }
}
