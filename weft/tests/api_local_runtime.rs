//! `runtime::LocalRuntime` and `#[weft::test(flavor = "local")]`: `!Send` tasks spawned
//! directly, without a `LocalSet`.

use std::cell::RefCell;
use std::rc::Rc;

use weft::runtime::{Builder, LocalOptions, LocalRuntime};

#[test]
fn spawn_local_inside_block_on_and_from_the_runtime() {
    let rt = LocalRuntime::new().unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = log.clone();
    let early = rt.spawn_local(async move {
        l.borrow_mut().push("early");
        1
    });
    let l = log.clone();
    let sum = rt.block_on(async move {
        let inner = weft::task::spawn_local(async move {
            l.borrow_mut().push("inner");
            weft::task::yield_now().await;
            2
        });
        let send = weft::spawn(async { 3 });
        early.await.unwrap() + inner.await.unwrap() + send.await.unwrap()
    });
    assert_eq!(sum, 6);
    let mut seen = log.borrow().clone();
    seen.sort();
    assert_eq!(seen, ["early", "inner"]);
}

#[test]
fn blocking_and_handle_spawn() {
    let rt = Builder::new_current_thread().enable_all().build_local(LocalOptions::default()).unwrap();
    let b = rt.spawn_blocking(|| 5);
    let h = rt.handle().spawn(async { 6 });
    assert_eq!(rt.block_on(async { b.await.unwrap() + h.await.unwrap() }), 11);
    rt.shutdown_background();
}

#[test]
#[should_panic(expected = "multi_thread is not supported for LocalRuntime")]
fn multi_thread_builder_is_refused() {
    let _ = Builder::new_multi_thread().build_local(LocalOptions::default());
}

#[weft::test(flavor = "local")]
async fn local_flavor_allows_spawn_local() {
    let shared = Rc::new(RefCell::new(0));
    let s = shared.clone();
    weft::task::spawn_local(async move { *s.borrow_mut() += 4 }).await.unwrap();
    assert_eq!(*shared.borrow(), 4);
}
