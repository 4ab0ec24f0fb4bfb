//! Writing JSON by hand: weft has no JSON dependency, and its two JSON outputs (the task dump,
//! `metrics/tasks.rs`, and the exit summary, `runtime/metrics/exit_summary.rs`) are flat
//! objects of numbers whose only free-form strings are source file paths. This is the one
//! string escaper both use, per RFC 8259 (quote, backslash, control characters).

use std::fmt::Write;

/// Appends `s` as a JSON string literal (quoted and escaped).
pub(crate) fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::push_string;

    #[test]
    fn strings_are_escaped_per_rfc_8259() {
        let mut out = String::new();
        push_string(&mut out, "a\"b\\c\nd\u{1}é/");
        assert_eq!(out, r#""a\"b\\c\nd\u0001é/""#);
    }
}
