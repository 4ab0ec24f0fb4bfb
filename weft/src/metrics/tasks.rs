//! The task dump as JSON (what `GET /tasks` on the metrics endpoint answers, and what
//! `weft-lab console` reads). Written by hand: weft has no JSON dependency, and the shape is
//! one flat array of objects whose only free-form strings are source file paths, escaped
//! per RFC 8259 by `util/json.rs`.
//!
//! ```json
//! {"tasks":[{"id":7,"state":"idle","file":"src/main.rs","line":12,"column":5,
//!   "age_seconds":1.5,"poll_count":3,"total_poll_time_seconds":null,"max_poll_time_seconds":null}]}
//! ```
//! Poll times are `null` unless the runtime times polls (`enable_metrics_poll_time_histogram`).

use std::fmt::Write;
use std::time::Duration;

use crate::runtime::TaskInfo;
use crate::util::json::push_string;

/// The `Content-Type` of [`render_json`]'s output.
pub const CONTENT_TYPE: &str = "application/json";

/// Renders a task dump (`Handle::dump_tasks()`) as one JSON object `{"tasks": [...]}`.
pub fn render_json(tasks: &[TaskInfo]) -> String {
    let mut out = String::with_capacity(64 + tasks.len() * 200);
    out.push_str("{\"tasks\":[");
    for (i, t) in tasks.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{{\"id\":{},\"state\":\"{}\",\"file\":", t.id.as_u64(), t.state.as_str());
        push_string(&mut out, t.spawn_location.file());
        let _ = write!(
            out,
            ",\"line\":{},\"column\":{},\"age_seconds\":{},\"poll_count\":{},\"total_poll_time_seconds\":{},\"max_poll_time_seconds\":{}}}",
            t.spawn_location.line(),
            t.spawn_location.column(),
            t.age.as_secs_f64(),
            t.poll_count,
            seconds(t.total_poll_time),
            seconds(t.max_poll_time),
        );
    }
    out.push_str("]}\n");
    out
}

/// `null` or the seconds (Rust's `Display` of an `f64` never uses an exponent: valid JSON).
fn seconds(d: Option<Duration>) -> String {
    d.map_or_else(|| "null".to_string(), |d| d.as_secs_f64().to_string())
}

#[cfg(all(test, not(loom)))]
mod tests {
    #[test]
    fn an_empty_dump_is_an_empty_array() {
        assert_eq!(super::render_json(&[]), "{\"tasks\":[]}\n");
    }
}
