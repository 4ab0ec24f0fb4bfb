//! A `select!` with 257 branches compiles and runs (tokio caps `select!` at 64). 1,025
//! branches also compile, but take ~5 CPU-minutes of rustc in a debug build (measured), too
//! long for every CI run; 257 keeps this test at a few seconds.

/// Each level doubles the branch list, then hands it to the next: 2^8 = 256 pending
/// branches, plus the one ready branch that `l0` appends.
macro_rules! l0 { ([$($t:tt)*]) => { weft::select! { $($t)* v = std::future::ready(7u32) => v, } } }
macro_rules! l1 { ([$($t:tt)*]) => { l0!([$($t)* $($t)*]) } }
macro_rules! l2 { ([$($t:tt)*]) => { l1!([$($t)* $($t)*]) } }
macro_rules! l3 { ([$($t:tt)*]) => { l2!([$($t)* $($t)*]) } }
macro_rules! l4 { ([$($t:tt)*]) => { l3!([$($t)* $($t)*]) } }
macro_rules! l5 { ([$($t:tt)*]) => { l4!([$($t)* $($t)*]) } }
macro_rules! l6 { ([$($t:tt)*]) => { l5!([$($t)* $($t)*]) } }
macro_rules! l7 { ([$($t:tt)*]) => { l6!([$($t)* $($t)*]) } }
macro_rules! l8 { ([$($t:tt)*]) => { l7!([$($t)* $($t)*]) } }

#[test]
fn select_with_257_branches() {
    let rt = weft::runtime::Builder::new_current_thread().build().unwrap();
    let v = rt.block_on(async { l8!([_ = std::future::pending::<()>() => 0u32,]) });
    assert_eq!(v, 7);
}
