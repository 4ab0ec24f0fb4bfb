//! JSONL session files (`weft_search::search` over `record` and `prefilter`): the first line of
//! the input is a query, the rest a file's bytes. Searching them never panics, and the raw-byte
//! prefilter changes no answer: the hits with it equal the hits without it (it may only skip
//! invalid lines that could not match).
#![no_main]

use std::sync::atomic::AtomicBool;

use libfuzzer_sys::fuzz_target;
use weft_search::query::Query;
use weft_search::search::{FileSearch, Filter, Job};

fuzz_target!(|data: &[u8]| {
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let Ok(query) = std::str::from_utf8(&data[..split]) else { return };
    let Ok(q) = Query::parse(query) else { return };
    let file = &data[(split + 1).min(data.len())..];
    let with = Job::new(q, Filter::default(), 50, false, true).with_details();
    let Ok(q) = Query::parse(query) else { return };
    let without = Job::new(q, Filter::default(), 50, false, true).with_details().without_prefilter();
    let search = |job: &Job| {
        let mut s = FileSearch::new(job, 0, 0);
        s.bytes(file, &AtomicBool::new(false));
        s.finish()
    };
    let (mut a, mut b) = (search(&with), search(&without));
    assert!(a.invalid_lines <= b.invalid_lines);
    (a.invalid_lines, b.invalid_lines, a.invalid_examples, b.invalid_examples) = (0, 0, Vec::new(), Vec::new());
    (a.stats, b.stats) = (None, None);
    assert_eq!(a.total_hits, b.total_hits, "hits with the prefilter, and without");
    assert_eq!(a.hits, b.hits, "the answer with the prefilter differs from the one without");
});
