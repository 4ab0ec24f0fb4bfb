//! The load of the A/B service studies (`axum-ab`, `data-ab`): `wrk`, the tool users load HTTP
//! services with, driven through a Lua script that rotates over routes, checks every response
//! (status 200 and one of the study's markers in the body; a response without one counts as
//! bad and fails the row) and prints one machine-readable summary line with the requests, wall
//! time and latency percentiles (µs).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The Lua script: paths from wrk's script arguments; `DELAY_MS=N` as the first argument paces
/// each connection (wrk waits N ms before each request). A good response holds one of `markers`.
fn script(markers: &[&str]) -> String {
    let found: Vec<String> =
        markers.iter().map(|m| format!("string.find(body, \"{}\", 1, true)", lua_escape(m))).collect();
    let found = if found.is_empty() { "true".to_string() } else { found.join(" or ") };
    format!(
        r#"local threads = {{}}
function setup(thread) table.insert(threads, thread) end
function init(args)
  reqs = {{}}
  pause = 0
  for _, a in ipairs(args) do
    local d = string.match(a, "^DELAY_MS=(%d+)$")
    if d then pause = tonumber(d) else table.insert(reqs, wrk.format("GET", a)) end
  end
  idx = 0
  bad = 0
end
function request()
  idx = idx % #reqs + 1
  return reqs[idx]
end
function delay() return pause end
function response(status, headers, body)
  if status ~= 200 or not ({found}) then
    bad = bad + 1
  end
end
function done(summary, latency, requests)
  local b = 0
  for _, t in ipairs(threads) do b = b + t:get("bad") end
  local e = summary.errors
  io.write(string.format('WEFTLAB %d %d %d %d %d %d %d\n', summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9),
    e.connect + e.read + e.write + e.status + e.timeout, b))
end
"#
    )
}

/// `s` as the inside of a double-quoted Lua string.
fn lua_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Writes the script (`DIR/NAME.lua`, next to the run's outputs: wrk reads it from a file).
pub fn write_script(dir: &Path, name: &str, markers: &[&str]) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.lua"));
    std::fs::write(&path, script(markers)).map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// What one wrk run measured.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub requests: u64,
    pub took: Duration,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// Socket errors, timeouts and non-2xx/3xx statuses.
    pub errors: u64,
    /// Responses that failed the script's check.
    pub bad: u64,
}

/// A running wrk.
pub struct Wrk(Child);

impl Wrk {
    /// Starts `wrk` with `connections` connections for `duration` against `paths` (rotated),
    /// each connection pausing `delay_ms` before each request.
    pub fn start(
        script: &Path,
        addr: SocketAddr,
        connections: usize,
        duration: Duration,
        paths: &[&str],
        delay_ms: u64,
    ) -> Result<Wrk, String> {
        let threads = connections.clamp(1, 2);
        let mut cmd = Command::new("wrk");
        cmd.args(["-t", &threads.to_string(), "-c", &connections.to_string()])
            // wrk takes whole seconds (no `ms` unit).
            .args(["-d", &format!("{}s", duration.as_secs_f64().ceil().max(1.0)), "--timeout", "10s", "-s"])
            .arg(script)
            .arg(format!("http://{addr}"))
            .arg("--");
        if delay_ms > 0 {
            cmd.arg(format!("DELAY_MS={delay_ms}"));
        }
        cmd.args(paths).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = cmd.spawn().map_err(|e| {
            format!("starting wrk: {e} (install it: `apt-get install wrk`; `.ci/run` does so when missing)")
        })?;
        Ok(Wrk(child))
    }

    /// Waits for wrk and reads its summary line.
    pub fn finish(self) -> Result<Summary, String> {
        let out = self.0.wait_with_output().map_err(|e| format!("waiting for wrk: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let line = stdout.lines().find_map(|l| l.strip_prefix("WEFTLAB ")).ok_or_else(|| {
            format!(
                "wrk printed no summary (exit {}): {}{}",
                out.status,
                stdout.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            )
        })?;
        let v: Vec<u64> = line
            .split_whitespace()
            .map(|x| x.parse().map_err(|e| format!("wrk summary {line:?}: {e}")))
            .collect::<Result<_, _>>()?;
        let [requests, duration_us, p50, p99, p999, errors, bad] = v[..] else {
            return Err(format!("wrk summary {line:?}: expected 7 numbers"));
        };
        Ok(Summary {
            requests,
            took: Duration::from_micros(duration_us),
            p50_us: p50 as f64,
            p99_us: p99 as f64,
            p999_us: p999 as f64,
            errors,
            bad,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_escaped_into_lua_strings() {
        let s = script(&["\"route\":\"", "<!-- a \\ b -->"]);
        assert!(
            s.contains(
                r#"string.find(body, "\"route\":\"", 1, true) or string.find(body, "<!-- a \\ b -->", 1, true)"#
            ),
            "{s}"
        );
    }
}
