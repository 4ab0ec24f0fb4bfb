//! Paused time (`test-util`): `pause`, `advance`, `resume`, `start_paused` and auto-advance.
//! Every assertion is on the paused clock, which moves only by exact amounts.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use weft::time::{self, Instant};

fn paused_rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().enable_all().start_paused(true).build().unwrap()
}

#[test]
fn hour_sleep_completes_with_exact_advance() {
    paused_rt().block_on(async {
        let start = Instant::now();
        time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(start.elapsed(), Duration::from_secs(3600));
    });
}

#[test]
fn advance_fires_due_timers_in_deadline_order() {
    paused_rt().block_on(async {
        let order = Arc::new(Mutex::new(Vec::new()));
        for ms in [30u64, 10, 50, 20] {
            let order = order.clone();
            weft::spawn(async move {
                time::sleep(Duration::from_millis(ms)).await;
                order.lock().unwrap().push(ms);
            });
        }
        weft::task::yield_now().await; // let every task register its timer
        let start = Instant::now();
        time::advance(Duration::from_millis(30)).await;
        assert_eq!(Instant::now() - start, Duration::from_millis(30));
        assert_eq!(*order.lock().unwrap(), vec![10, 20, 30]);
        time::advance(Duration::from_millis(19)).await;
        assert_eq!(*order.lock().unwrap(), vec![10, 20, 30]);
        time::advance(Duration::from_millis(1)).await;
        assert_eq!(*order.lock().unwrap(), vec![10, 20, 30, 50]);
    });
}

#[test]
fn auto_advance_wakes_several_sleepers_in_order() {
    paused_rt().block_on(async {
        let start = Instant::now();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::new();
        for secs in [5u64, 1, 3, 2, 4] {
            let order = order.clone();
            handles.push(weft::spawn(async move {
                time::sleep(Duration::from_secs(secs)).await;
                order.lock().unwrap().push((secs, Instant::now() - start));
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
        let expected: Vec<_> = (1..=5).map(|s| (s, Duration::from_secs(s))).collect();
        assert_eq!(*order.lock().unwrap(), expected);
        assert_eq!(start.elapsed(), Duration::from_secs(5));
    });
}

#[test]
fn pause_resume_and_misuse_messages() {
    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        time::pause();
        let t = Instant::now();
        time::advance(Duration::from_millis(7)).await;
        assert_eq!(Instant::now() - t, Duration::from_millis(7));
        time::resume();
    });
    let err = std::panic::catch_unwind(time::pause).unwrap_err();
    assert_eq!(
        err.downcast_ref::<&str>().copied().or(err.downcast_ref::<String>().map(|s| s.as_str())),
        Some("time cannot be frozen from outside the Tokio runtime")
    );
}

#[test]
#[should_panic(expected = "`time::pause()` requires the `current_thread` Tokio runtime. \
                           This is the default Runtime used by `#[tokio::test].")]
fn pause_on_multi_thread_panics() {
    let rt = weft::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    rt.block_on(async { time::pause() });
}

#[weft::test(start_paused = true)]
async fn test_macro_start_paused() {
    let start = Instant::now();
    time::sleep(Duration::from_secs(86_400)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(86_400));
}

#[weft::test(start_paused = true)]
async fn interval_ticks_exactly() {
    let start = Instant::now();
    let mut iv = time::interval(Duration::from_millis(250));
    let mut at = Vec::new();
    for _ in 0..5 {
        let t = iv.tick().await;
        at.push(t - start);
    }
    let expected: Vec<_> = (0..5).map(|i| Duration::from_millis(250 * i)).collect();
    assert_eq!(at, expected);
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

/// Runs `f` on another thread; fails instead of hanging the test run if it takes over 60 s.
fn within_a_minute(f: impl FnOnce() + Send + 'static) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => {}
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("the test body panicked (see above)"),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => panic!("hung: the runtime never finished"),
    }
}

#[test]
fn a_sleep_of_decades_does_not_stall_other_timers_after_a_long_advance() {
    within_a_minute(|| {
        paused_rt().block_on(async {
            // ~22 years: far past the wheel's ~19 h reach, re-inserted as the clock moves.
            let long = weft::spawn(time::sleep(Duration::from_millis(10 << 36)));
            time::advance(Duration::from_millis((1 << 30) - 1)).await;
            let start = Instant::now();
            time::sleep(Duration::from_millis(10)).await;
            assert_eq!(start.elapsed(), Duration::from_millis(10));
            let mut first = Box::pin(time::sleep(Duration::from_millis(10)));
            let mut second = Box::pin(time::sleep(Duration::from_millis(20)));
            assert!(futures_poll_once(first.as_mut()).await.is_pending());
            assert!(futures_poll_once(second.as_mut()).await.is_pending());
            time::advance(Duration::from_millis(30)).await;
            assert!(first.is_elapsed() && second.is_elapsed());
            time::advance(Duration::from_millis(1 << 31)).await;
            assert!(!long.is_finished(), "a 22-year sleep finished after ~37 days");
            long.abort();
        });
    });
}

/// Polls `f` once (with the task's waker) and reports the result.
async fn futures_poll_once<F: std::future::Future + Unpin>(mut f: F) -> std::task::Poll<F::Output> {
    std::future::poll_fn(|cx| std::task::Poll::Ready(std::pin::Pin::new(&mut f).poll(cx))).await
}

#[test]
fn duration_max_periods_and_resets_do_not_overflow() {
    within_a_minute(|| {
        paused_rt().block_on(async {
            let mut forever = time::interval(Duration::MAX);
            // The first tick is due at once, on the first poll.
            assert!(futures_poll_once(Box::pin(forever.tick())).await.is_ready());
            assert!(futures_poll_once(Box::pin(forever.tick())).await.is_pending());
            forever.reset();
            forever.reset_after(Duration::MAX);
            let mut skip = time::interval(Duration::from_secs(1));
            skip.set_missed_tick_behavior(time::MissedTickBehavior::Skip);
            skip.tick().await;
            time::advance(Duration::from_millis(3_500)).await;
            let at = skip.tick().await;
            assert_eq!(at.elapsed(), Duration::from_millis(2_500), "the missed tick at 1 s fires late");
            let next = skip.tick().await;
            assert_eq!(next.elapsed(), Duration::ZERO, "Skip resumes on the 1 s grid, at 4 s");
            let start = Instant::now();
            let year = Duration::from_secs(86_400 * 365);
            assert!(time::timeout(year, time::sleep(Duration::MAX)).await.is_err(), "a Duration::MAX sleep completed");
            assert_eq!(start.elapsed(), Duration::from_secs(86_400 * 365));
        });
    });
}

#[test]
fn no_auto_advance_while_a_blocking_closure_runs_and_it_resumes_after() {
    within_a_minute(|| {
        paused_rt().block_on(async {
            let start = Instant::now();
            // The runtime is idle meanwhile; auto-advance would fire each timeout at once. Many
            // rounds: the hold must last until the joiner is woken, not just until the closure
            // returns (the runtime could advance in between).
            for _ in 0..50 {
                let blocking = weft::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(2)));
                let res = time::timeout(Duration::from_millis(1), blocking).await;
                assert!(res.is_ok(), "auto-advance fired a timeout around a running blocking closure");
            }
            assert_eq!(start.elapsed(), Duration::ZERO);
            // A detached closure holds the clock too, and its end lets auto-advance go on (the
            // hour passes at once on the paused clock, not in real time).
            drop(weft::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(20))));
            time::sleep(Duration::from_secs(3600)).await;
            assert_eq!(start.elapsed(), Duration::from_secs(3600));
        });
    });
}

#[test]
fn an_unawaited_blocking_closure_lets_auto_advance_go_on_when_it_ends() {
    within_a_minute(|| {
        paused_rt().block_on(async {
            let start = Instant::now();
            // The handle is kept but not polled until after the sleep: the closure completes
            // with no joiner waiting, and that must still release the paused clock.
            let handle = weft::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(5)));
            time::sleep(Duration::from_secs(15)).await;
            handle.await.unwrap();
            assert_eq!(start.elapsed(), Duration::from_secs(15));
        });
    });
}

/// `Sleep::reset` to a later deadline leaves the entry where the wheel filed it (no lock); the
/// sleep must still fire exactly at the new deadline, not at the old one, and moving it
/// earlier again (which unlinks it) must fire at that earlier deadline.
#[weft::test(start_paused = true)]
async fn reset_later_fires_at_the_new_deadline_and_earlier_again_works() {
    let start = Instant::now();
    let sleep = time::sleep(Duration::from_millis(10));
    check_reset_sequence(sleep, start).await;
}

async fn check_reset_sequence(sleep: time::Sleep, start: Instant) {
    let mut sleep = std::pin::pin!(sleep);
    assert!(futures_poll_once(sleep.as_mut()).await.is_pending(), "registered");
    for ms in [20, 30, 500] {
        sleep.as_mut().reset(start + Duration::from_millis(ms));
    }
    time::advance(Duration::from_millis(499)).await;
    assert!(futures_poll_once(sleep.as_mut()).await.is_pending(), "fired before its new deadline");
    assert!(!sleep.is_elapsed());
    sleep.as_mut().await;
    assert_eq!(start.elapsed(), Duration::from_millis(500));

    // Later again after it fired, then earlier than that (unlinks it): fires at the earlier one.
    sleep.as_mut().reset(start + Duration::from_millis(2_000));
    assert!(futures_poll_once(sleep.as_mut()).await.is_pending());
    sleep.as_mut().reset(start + Duration::from_millis(5_000));
    sleep.as_mut().reset(start + Duration::from_millis(800));
    sleep.as_mut().await;
    assert_eq!(start.elapsed(), Duration::from_millis(800));
}

/// A sleep moved later from another task while its owner waits on it still wakes the owner
/// (the wheel keeps the owner's waker when it files the entry again).
#[weft::test(start_paused = true)]
async fn a_sleep_moved_later_still_wakes_its_waiting_task() {
    let start = Instant::now();
    let sleep = Arc::new(Mutex::new(Box::pin(time::sleep(Duration::from_millis(10)))));
    let waiter = {
        let sleep = sleep.clone();
        weft::spawn(async move {
            std::future::poll_fn(|cx| sleep.lock().unwrap().as_mut().poll(cx)).await;
            Instant::now()
        })
    };
    weft::task::yield_now().await; // the waiter registers the sleep
    sleep.lock().unwrap().as_mut().reset(start + Duration::from_millis(250));
    let fired_at = waiter.await.unwrap();
    assert_eq!(fired_at - start, Duration::from_millis(250));
}

/// A pending sleep moved to an earlier deadline keeps the waker it was polled with: the task
/// is woken at the new deadline without polling in between (tokio's behaviour, which
/// tokio-util's `DelayQueue` relies on: it resets its timer and waits).
#[weft::test(start_paused = true)]
async fn reset_earlier_wakes_the_waiting_task_without_a_poll_in_between() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Wake, Waker};

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let count = Arc::new(Count(AtomicUsize::new(0)));
    let waker = Waker::from(count.clone());
    let start = weft::time::Instant::now();
    let mut sleep = Box::pin(weft::time::sleep_until(start + Duration::from_millis(200)));
    assert!(sleep.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
    sleep.as_mut().reset(start + Duration::from_millis(50));
    sleep.as_mut().reset(start + Duration::from_millis(40));
    weft::time::advance(Duration::from_millis(30)).await;
    assert_eq!(count.0.load(Ordering::SeqCst), 0, "woken before the new deadline");
    weft::time::advance(Duration::from_millis(20)).await;
    assert_eq!(count.0.load(Ordering::SeqCst), 1, "not woken at the new deadline (40 ms)");
    assert!(sleep.as_mut().poll(&mut Context::from_waker(&waker)).is_ready());
}

/// Blocking tasks whose `JoinHandle` is dropped the moment they finish, their cells reused at
/// once by the next ones: each closure's clock hold must be released exactly once, by its own
/// task (a release made after the completer's reference is gone can hit a reused cell and
/// release another task's hold: the count underflows, a pool thread panics and the runtime's
/// drop waits for it forever).
#[test]
fn blocking_handles_dropped_at_completion_release_each_hold_once() {
    // The window is a few instructions wide, so several runtimes race at once (more threads
    // than cores: a completer preempted inside it is what exposes the bug).
    within_a_minute(|| {
        let runtimes: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                    rt.block_on(async {
                        for _ in 0..5000 {
                            let handles: Vec<_> = (0..2).map(|_| weft::task::spawn_blocking(|| {})).collect();
                            for h in handles {
                                while !h.is_finished() {
                                    std::hint::spin_loop();
                                }
                                drop(h);
                            }
                        }
                        // One more closure, awaited: the pool is still healthy.
                        weft::task::spawn_blocking(|| {}).await.unwrap();
                    });
                    drop(rt);
                })
            })
            .collect();
        for rt in runtimes {
            rt.join().expect("a runtime's thread panicked");
        }
    });
}

/// A key-value server in the shape of a real application's test (mini-redis's
/// `key_value_timeout`): a connection task serves `SET key ttl_ms` / `GET key` over TCP, a
/// purge task removes expired keys, sleeping in `select!` on `sleep_until(next expiry)` and a
/// `Notify` that a `SET` signals. The test pauses time, sets a key with a 1 s expiry, advances
/// 1 s and expects the key gone on the next request: `advance` must let every timer due by the
/// new instant fire, and the tasks they wake run, before it returns (tokio's documented
/// semantics: it waits for a timer at the new instant).
mod expiry_scenario {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use weft::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use weft::net::{TcpListener, TcpStream};
    use weft::sync::Notify;
    use weft::time::{self, Instant};

    #[derive(Default)]
    struct Db {
        entries: Mutex<HashMap<String, (String, Option<Instant>)>>,
        changed: Notify,
    }

    impl Db {
        /// Removes what has expired; the next deadline, if any.
        fn purge(&self) -> Option<Instant> {
            let now = Instant::now();
            let mut entries = self.entries.lock().unwrap();
            entries.retain(|_, (_, exp)| exp.is_none_or(|e| e > now));
            entries.values().filter_map(|(_, exp)| *exp).min()
        }
    }

    async fn purge_task(db: Arc<Db>) {
        loop {
            match db.purge() {
                Some(when) => {
                    weft::select! {
                        _ = time::sleep_until(when) => {}
                        _ = db.changed.notified() => {}
                    }
                }
                None => db.changed.notified().await,
            }
        }
    }

    async fn serve(db: Arc<Db>, stream: TcpStream) {
        let (rd, mut wr) = stream.into_split();
        let mut lines = BufReader::new(rd).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            let words: Vec<&str> = line.split(' ').collect();
            let reply = match words.as_slice() {
                ["SET", key, value, ttl_ms] => {
                    let ttl = Duration::from_millis(ttl_ms.parse().unwrap());
                    let exp = Instant::now() + ttl;
                    db.entries.lock().unwrap().insert(key.to_string(), (value.to_string(), Some(exp)));
                    db.changed.notify_one();
                    "OK".to_string()
                }
                // The GET reads the map only: whether the key is there is the purge task's doing.
                ["GET", key] => match db.entries.lock().unwrap().get(*key) {
                    Some((v, _)) => v.clone(),
                    None => "(nil)".to_string(),
                },
                _ => "ERR".to_string(),
            };
            wr.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
        }
    }

    async fn request(lines: &mut weft::io::Lines<BufReader<TcpStream>>, cmd: &str) -> String {
        lines.get_mut().get_mut().write_all(format!("{cmd}\n").as_bytes()).await.unwrap();
        lines.next_line().await.unwrap().unwrap()
    }

    #[weft::test]
    async fn advance_lets_the_purge_task_remove_an_expired_key_before_the_next_request() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let db = Arc::new(Db::default());
        weft::spawn(purge_task(db.clone()));
        weft::spawn(async move {
            loop {
                let (s, _) = listener.accept().await.unwrap();
                weft::spawn(serve(db.clone(), s));
            }
        });
        // Paused after real-time work (the bind), so the paused clock sits at an arbitrary
        // sub-tick instant, as in an application's test.
        time::pause();
        let t0 = Instant::now();
        let mut lines = BufReader::new(TcpStream::connect(addr).await.unwrap()).lines();
        assert_eq!(request(&mut lines, "SET hello world 1000").await, "OK");
        assert_eq!(request(&mut lines, "GET hello").await, "world");
        time::advance(Duration::from_millis(999)).await;
        assert_eq!(request(&mut lines, "GET hello").await, "world", "expired 1 ms early");
        time::advance(Duration::from_millis(1)).await;
        assert_eq!(request(&mut lines, "GET hello").await, "(nil)", "advance returned before the purge task ran");
        assert_eq!(Instant::now() - t0, Duration::from_secs(1), "the paused clock moved by more than was asked");
        // Again with the key set after advances, at a later paused instant.
        assert_eq!(request(&mut lines, "SET k v 1000").await, "OK");
        time::advance(Duration::from_secs(1)).await;
        assert_eq!(request(&mut lines, "GET k").await, "(nil)");
    }
}
