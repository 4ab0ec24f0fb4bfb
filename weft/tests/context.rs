//! Misuse outside/inside a runtime panics with a message that says what to do.

mod support;

use std::panic::catch_unwind;
use std::time::Duration;

fn panic_message(r: std::thread::Result<()>) -> String {
    let payload = r.expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn spawn_outside_runtime_panics_with_guidance() {
    let msg = panic_message(catch_unwind(|| {
        drop(weft::spawn(async {}));
    }));
    assert!(msg.contains("no weft runtime"), "{msg}");
    assert!(msg.contains("block_on") && msg.contains("enter"), "message should say how to enter one: {msg}");
}

#[test]
fn sleep_outside_runtime_panics_with_guidance() {
    let msg = panic_message(catch_unwind(|| {
        drop(weft::time::sleep(Duration::from_millis(1)));
    }));
    assert!(msg.contains("no weft runtime"), "{msg}");
}

#[test]
fn sleep_without_time_driver_panics() {
    let rt = weft::runtime::Builder::new_current_thread().build().unwrap();
    let _g = rt.enter();
    let msg = panic_message(catch_unwind(|| {
        drop(weft::time::sleep(Duration::from_millis(1)));
    }));
    assert!(msg.contains("enable_time"), "{msg}");
}

#[test]
fn block_on_inside_task_panics_instead_of_deadlocking() {
    for (name, rt) in support::flavors() {
        let res = rt.block_on(async {
            weft::spawn(async {
                let inner = support::ct();
                inner.block_on(async {});
            })
            .await
        });
        let err = res.expect_err(name);
        assert!(err.is_panic(), "{name}");
        let payload = err.into_panic();
        let msg = payload.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(msg.contains("cannot start a runtime from within a runtime"), "{name}: {msg}");
    }
}

#[test]
fn nested_block_on_panics() {
    let rt = support::mt(2);
    let msg = panic_message(catch_unwind(std::panic::AssertUnwindSafe(|| {
        rt.block_on(async { rt.block_on(async {}) });
    })));
    assert!(msg.contains("within a runtime"), "{msg}");
    // The runtime still works afterwards.
    assert_eq!(rt.block_on(async { weft::spawn(async { 7 }).await.unwrap() }), 7);
}

#[test]
fn handle_current_and_enter() {
    assert!(weft::runtime::Handle::try_current().is_err());
    let rt = support::mt(1);
    {
        let _g = rt.enter();
        let h = weft::runtime::Handle::current();
        assert_eq!(h.runtime_flavor(), weft::runtime::RuntimeFlavor::MultiThread);
        // Spawning after `enter` on a plain thread goes to the runtime.
        let j = weft::spawn(async { 5 });
        assert_eq!(rt.block_on(j).unwrap(), 5);
    }
    assert!(weft::runtime::Handle::try_current().is_err(), "guard restores the previous context");
}

#[test]
fn handle_spawns_from_other_threads() {
    let rt = support::mt(2);
    let h = rt.handle().clone();
    let out = std::thread::spawn(move || {
        let j = h.spawn(async { 40 + 2 });
        h.block_on(j).unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(out, 42);
}

#[test]
fn builder_rejects_zero_knobs() {
    assert!(catch_unwind(|| {
        weft::runtime::Builder::new_multi_thread().worker_threads(0);
    })
    .is_err());
    assert!(catch_unwind(|| {
        weft::runtime::Builder::new_multi_thread().global_queue_interval(0);
    })
    .is_err());
    assert!(catch_unwind(|| {
        weft::runtime::Builder::new_multi_thread().event_interval(0);
    })
    .is_err());
}

#[test]
fn worker_threads_get_names_and_callbacks() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    let started = Arc::new(AtomicUsize::new(0));
    let stopped = Arc::new(AtomicUsize::new(0));
    let (s1, s2) = (started.clone(), stopped.clone());
    let rt = weft::runtime::Builder::new_multi_thread()
        .worker_threads(3)
        .thread_name("lab-worker")
        .on_thread_start(move || {
            s1.fetch_add(1, SeqCst);
        })
        .on_thread_stop(move || {
            s2.fetch_add(1, SeqCst);
        })
        .enable_all()
        .build()
        .unwrap();
    let name =
        rt.block_on(async { weft::spawn(async { std::thread::current().name().map(str::to_string) }).await.unwrap() });
    assert_eq!(name.as_deref(), Some("lab-worker"));
    drop(rt);
    assert_eq!(started.load(SeqCst), 3);
    assert_eq!(stopped.load(SeqCst), 3);
}
