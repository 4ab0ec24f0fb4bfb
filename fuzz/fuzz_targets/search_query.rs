//! The search query language (`weft_search::query`): any string either parses or is an error
//! naming the problem, and a parsed query evaluates and highlights without panicking, its
//! highlight a valid span of the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use weft_search::query::Query;

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else { return };
    let (query, text) = src.split_once('\n').unwrap_or((src, src));
    match Query::parse(query) {
        Ok(q) => {
            let _ = q.is_match(text);
            if let Some((a, b)) = q.highlight(text) {
                assert!(a <= b && b <= text.len(), "highlight {a}..{b} outside a {}-byte text", text.len());
                assert!(text.is_char_boundary(a) && text.is_char_boundary(b), "highlight splits a character");
            }
        }
        Err(e) => assert!(!e.to_string().is_empty(), "an error without a message"),
    }
});
