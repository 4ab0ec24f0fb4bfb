//! `Builder::on_thread_park` / `on_thread_unpark`: every park announced is followed by an
//! unpark on the same thread, and a runtime that had to wait parked at least once.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use weft::runtime::Builder;

#[derive(Default)]
struct Hooks {
    parks: AtomicUsize,
    unparks: AtomicUsize,
    /// (thread, thread name, is_park) in the order each thread saw them.
    log: Mutex<Vec<(std::thread::ThreadId, String, bool)>>,
}

fn install(b: &mut Builder, hooks: &Arc<Hooks>) {
    let (p, u) = (hooks.clone(), hooks.clone());
    b.on_thread_park(move || {
        p.parks.fetch_add(1, SeqCst);
        p.log.lock().unwrap().push(me(true));
    })
    .on_thread_unpark(move || {
        u.unparks.fetch_add(1, SeqCst);
        u.log.lock().unwrap().push(me(false));
    });
}

fn me(park: bool) -> (std::thread::ThreadId, String, bool) {
    let t = std::thread::current();
    (t.id(), t.name().unwrap_or("").to_owned(), park)
}

/// Waits for a value that a plain thread sends only once the runtime has parked.
async fn wait_for_outside_thread(hooks: Arc<Hooks>) -> u32 {
    let (tx, rx) = weft::sync::oneshot::channel();
    let t = std::thread::spawn(move || {
        while hooks.parks.load(SeqCst) == 0 {
            std::thread::yield_now();
        }
        tx.send(11).unwrap();
    });
    let rx = weft::spawn(rx);
    let v = rx.await.unwrap().unwrap();
    t.join().unwrap();
    v
}

fn check_pairs(hooks: &Hooks) {
    let (parks, unparks) = (hooks.parks.load(SeqCst), hooks.unparks.load(SeqCst));
    assert_eq!(parks, unparks, "every park is followed by an unpark");
    // Per thread, the log alternates park, unpark, park, unpark...
    let log = hooks.log.lock().unwrap();
    let mut threads: Vec<_> = log.iter().map(|(t, _, _)| *t).collect();
    threads.dedup();
    for thread in threads {
        let seq: Vec<bool> = log.iter().filter(|(t, _, _)| *t == thread).map(|&(_, _, p)| p).collect();
        assert!(seq.chunks(2).all(|c| c == [true, false]), "{thread:?}: {seq:?}");
    }
}

#[test]
fn current_thread_park_hooks_pair_up() {
    let hooks = Arc::new(Hooks::default());
    let mut b = Builder::new_current_thread();
    install(&mut b, &hooks);
    let rt = b.build().unwrap();
    assert_eq!(rt.block_on(wait_for_outside_thread(hooks.clone())), 11);
    drop(rt);
    assert!(hooks.parks.load(SeqCst) >= 1, "block_on parks while it waits");
    check_pairs(&hooks);
}

#[test]
fn multi_thread_park_hooks_pair_up_on_workers() {
    let hooks = Arc::new(Hooks::default());
    let mut b = Builder::new_multi_thread();
    b.worker_threads(2).thread_name("hooked-worker");
    install(&mut b, &hooks);
    let rt = b.build().unwrap();
    assert_eq!(rt.block_on(wait_for_outside_thread(hooks.clone())), 11);
    drop(rt);
    assert!(hooks.parks.load(SeqCst) >= 1, "idle workers park");
    check_pairs(&hooks);
    assert!(hooks.log.lock().unwrap().iter().all(|(_, n, _)| n == "hooked-worker"));
}
