//! One run of the user's command under one configuration: spawn it with the configuration's
//! environment, wait with a timeout, and read the metric (wall time, child CPU time, or a
//! number from its stdout).
//!
//! Shape, and why:
//! * The child leads its own process group, so a timeout kills the command *and* whatever it
//!   started (`sh -c 'sleep 1000'` would otherwise keep the output pipes open forever); the
//!   group is also killed once the command exits, so nothing it left behind runs into the
//!   next configuration's measurement.
//! * A waiter thread blocks in `wait` and stamps the exit time, so the wall time does not
//!   depend on a polling interval; the main thread waits on a channel with the timeout.
//! * CPU time is the change of `getrusage(RUSAGE_CHILDREN)` across the run: runs are
//!   sequential, so the delta is this command plus the descendants it waited for.
//! * stdout is kept for the regex metric; stderr only for its last lines in error messages.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use regex::Regex;

/// What `tune` measures per run.
#[derive(Clone, Debug)]
pub enum Metric {
    /// Elapsed time from spawn to exit, seconds.
    Wall,
    /// User + system CPU time of the command and its waited-for descendants, seconds.
    UserSys,
    /// The first capture group of the last match in stdout, as a number.
    Regex(Regex),
}

impl Metric {
    /// Parses `wall`, `user+sys` or `regex:PATTERN` (PATTERN needs a capture group).
    pub fn parse(text: &str) -> Result<Metric, String> {
        match text {
            "wall" => Ok(Metric::Wall),
            "user+sys" => Ok(Metric::UserSys),
            _ => {
                let pattern = text
                    .strip_prefix("regex:")
                    .ok_or_else(|| format!("bad --metric {text:?}: expected wall, user+sys or regex:PATTERN"))?;
                let re = Regex::new(pattern).map_err(|e| format!("bad --metric regex {pattern:?}: {e}"))?;
                if re.captures_len() < 2 {
                    return Err(format!(
                        "bad --metric regex {pattern:?}: it needs a capture group around the number, e.g. regex:'took ([0-9.]+) ms'"
                    ));
                }
                Ok(Metric::Regex(re))
            }
        }
    }

    /// `wall`, `user+sys` or `regex:PATTERN`.
    pub fn name(&self) -> String {
        match self {
            Metric::Wall => "wall".into(),
            Metric::UserSys => "user+sys".into(),
            Metric::Regex(re) => format!("regex:{}", re.as_str()),
        }
    }

    /// Whether values are seconds (formatted as times).
    pub fn is_time(&self) -> bool {
        !matches!(self, Metric::Regex(_))
    }
}

/// The command line and the fixed parts of every run.
pub struct Target<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    /// Variables removed from every run's environment (all knob names), before the
    /// configuration's own are set.
    pub knob_names: &'a [String],
    pub timeout: Duration,
}

/// Why a run produced no value.
#[derive(Clone, Debug, PartialEq)]
pub enum RunError {
    Spawn(String),
    TimedOut(Duration),
    Exit { status: String, stderr_tail: String },
    Metric(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Spawn(e) => write!(f, "could not start the command: {e}"),
            RunError::TimedOut(t) => write!(f, "timed out after {} (killed)", humantime::format_duration(*t)),
            RunError::Exit { status, stderr_tail } if stderr_tail.is_empty() => write!(f, "{status}"),
            RunError::Exit { status, stderr_tail } => write!(f, "{status}; stderr ends: {stderr_tail}"),
            RunError::Metric(e) => f.write_str(e),
        }
    }
}

/// Runs `target` once with `vars` set (and `WEFT_METRICS_DUMP=dump`), returning the metric.
pub fn run_once(target: &Target<'_>, vars: &[(String, String)], metric: &Metric, dump: &Path) -> Result<f64, RunError> {
    let mut cmd = Command::new(target.program);
    cmd.args(target.args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    for name in target.knob_names {
        cmd.env_remove(name);
    }
    for (name, value) in vars {
        cmd.env(name, value);
    }
    cmd.env("WEFT_METRICS_DUMP", dump);

    let cpu_before = children_cpu();
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| RunError::Spawn(format!("{}: {e}", target.program)))?;
    let pgid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut stderr = child.stderr.take().expect("stderr is piped");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stdout.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stderr.read_to_end(&mut buf);
        buf
    });
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send((status, Instant::now()));
    });
    let (waited, timed_out) = match rx.recv_timeout(target.timeout) {
        Ok(done) => (done, false),
        Err(_) => {
            kill_group(pgid);
            (rx.recv().expect("the waiter thread always sends"), true)
        }
    };
    let _ = waiter.join();
    // Whatever the command left running in its group would hold the pipes (and the CPU).
    kill_group(pgid);
    let cpu = children_cpu() - cpu_before;
    let (status, end) = waited;
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if timed_out {
        return Err(RunError::TimedOut(target.timeout));
    }
    let status: ExitStatus = status.map_err(|e| RunError::Spawn(format!("wait failed: {e}")))?;
    if !status.success() {
        return Err(RunError::Exit { status: status.to_string(), stderr_tail: tail(&err) });
    }
    match metric {
        Metric::Wall => Ok((end - start).as_secs_f64()),
        Metric::UserSys => Ok(cpu),
        Metric::Regex(re) => extract(re, &String::from_utf8_lossy(&out)),
    }
}

/// The first capture group of the last match of `re` in `stdout`, as an `f64`.
pub fn extract(re: &Regex, stdout: &str) -> Result<f64, RunError> {
    let caps = re.captures_iter(stdout).last().ok_or_else(|| {
        RunError::Metric(format!("the metric pattern /{}/ did not match the command's stdout", re.as_str()))
    })?;
    let text = caps.get(1).map_or("", |m| m.as_str()).trim();
    text.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
        RunError::Metric(format!("the metric pattern /{}/ captured {text:?}, which is not a number", re.as_str()))
    })
}

/// The last two non-empty lines of `bytes`, joined by " / " (at most 300 characters).
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let joined = lines[lines.len().saturating_sub(2)..].join(" / ");
    match joined.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &joined[..i]),
        None => joined,
    }
}

fn kill_group(pgid: libc::pid_t) {
    // SAFETY: `kill` has no memory-safety preconditions; a negative pid addresses the process
    // group the child leads (`process_group(0)`), and ESRCH (group gone) is harmless.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// User + system CPU seconds of all waited-for children of this process so far.
fn children_cpu() -> f64 {
    // SAFETY: `rusage` is a plain C struct for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable `rusage` for the duration of the call.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_parse() {
        assert!(matches!(Metric::parse("wall"), Ok(Metric::Wall)));
        assert!(matches!(Metric::parse("user+sys"), Ok(Metric::UserSys)));
        assert_eq!(Metric::parse(r"regex:took (\d+) ms").unwrap().name(), r"regex:took (\d+) ms");
        assert!(Metric::parse("regex:took").unwrap_err().contains("capture group"));
        assert!(Metric::parse("regex:(").unwrap_err().contains("bad --metric regex"));
        assert!(Metric::parse("cpu").unwrap_err().contains("expected wall, user+sys or regex:PATTERN"));
    }

    #[test]
    fn regex_takes_the_last_match_first_group() {
        let re = Regex::new(r"took ([0-9.]+) ms").unwrap();
        assert_eq!(extract(&re, "took 5 ms\nnoise\ntook 7.5 ms\n"), Ok(7.5));
        assert!(matches!(extract(&re, "nothing"), Err(RunError::Metric(e)) if e.contains("did not match")));
        let re = Regex::new(r"v=(\S*)").unwrap();
        assert!(matches!(extract(&re, "v=abc"), Err(RunError::Metric(e)) if e.contains("not a number")));
    }

    #[test]
    fn stderr_tail_keeps_the_last_two_lines() {
        assert_eq!(tail(b"a\n\nb\nc\n"), "b / c");
        assert_eq!(tail(b""), "");
    }
}
