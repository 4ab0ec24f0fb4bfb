//! `task_local!`: `scope`, `sync_scope`, `with`, `try_with`, `get`, nesting, isolation
//! between tasks, and `TaskLocalFuture::take_value`.

use std::cell::Cell;

weft::task_local! {
    static NUMBER: u32;
    pub static NAME: String
}

#[test]
fn scope_sets_the_value_across_awaits_on_any_worker() {
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(2).build().unwrap();
    let got = rt.block_on(async {
        let handles: Vec<_> = (0..8u32)
            .map(|i| {
                weft::spawn(NUMBER.scope(i, async move {
                    let mut seen = Vec::new();
                    for _ in 0..5 {
                        seen.push(NUMBER.get());
                        weft::task::yield_now().await;
                    }
                    (i, seen)
                }))
            })
            .collect();
        let mut out = Vec::new();
        for h in handles {
            out.push(h.await.unwrap());
        }
        out
    });
    for (i, seen) in got {
        assert_eq!(seen, vec![i; 5], "task {i} saw another task's value");
    }
}

#[test]
fn unset_value_is_an_access_error_and_with_panics() {
    assert!(NUMBER.try_with(|_| ()).is_err());
    assert_eq!(NUMBER.try_with(|_| ()).unwrap_err().to_string(), "task-local value not set");
    let err = std::panic::catch_unwind(|| NUMBER.with(|v| *v)).unwrap_err();
    assert_eq!(
        err.downcast_ref::<&str>().copied(),
        Some("cannot access a task-local storage value without setting it first")
    );
}

#[test]
fn sync_scope_nests_and_restores() {
    let r = NUMBER.sync_scope(1, || {
        let inner = NUMBER.sync_scope(2, || NUMBER.get());
        (inner, NUMBER.get())
    });
    assert_eq!(r, (2, 1));
    assert!(NUMBER.try_with(|_| ()).is_err(), "value must be gone after the scope");
}

#[test]
fn value_is_restored_when_the_scope_panics() {
    let r = std::panic::catch_unwind(|| NUMBER.sync_scope(5, || panic!("inside")));
    assert!(r.is_err());
    assert!(NUMBER.try_with(|_| ()).is_err());
}

#[test]
fn take_value_returns_the_value_and_leaves_the_future_running_without_it() {
    // tokio's semantics: `take_value` only takes the value; the inner future stays, and
    // from then on it (and its destructor) sees the key unset.
    thread_local!(static SEEN_IN_DROP: Cell<Option<Option<u32>>> = const { Cell::new(None) });
    struct ReadsOnDrop;
    impl Drop for ReadsOnDrop {
        fn drop(&mut self) {
            SEEN_IN_DROP.with(|s| s.set(Some(NUMBER.try_with(|v| *v).ok())));
        }
    }
    let guard = ReadsOnDrop;
    let fut = NUMBER.scope(9, async move {
        let _g = guard;
        std::future::pending::<()>().await
    });
    let mut fut = Box::pin(fut);
    assert_eq!(fut.as_mut().take_value(), Some(9));
    assert_eq!(SEEN_IN_DROP.with(|s| s.get()), None, "the inner future is still alive");
    assert_eq!(fut.as_mut().take_value(), None);
    drop(fut);
    assert_eq!(SEEN_IN_DROP.with(|s| s.get()), Some(None), "dropped without the value set");
}

#[test]
fn string_key_with_and_get() {
    let rt = weft::runtime::Builder::new_current_thread().build().unwrap();
    rt.block_on(NAME.scope("weft".to_string(), async {
        assert_eq!(NAME.with(|n| n.len()), 4);
        assert_eq!(NAME.get(), "weft");
    }));
}
