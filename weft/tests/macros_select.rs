//! `select!`, `join!`, `try_join!`, `pin!`: branch choice, preconditions, pattern refusal,
//! `else`, cancellation of the losers (exact drop counts) and output order.

use std::future::{pending, ready, Future};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

fn rt() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Counts polls and drops of a never-ready future.
struct Probe {
    polls: Arc<AtomicUsize>,
    drops: Arc<AtomicUsize>,
}

impl Future for Probe {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        self.polls.fetch_add(1, Ordering::SeqCst);
        Poll::Pending
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn probe() -> (Probe, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let polls = Arc::new(AtomicUsize::new(0));
    let drops = Arc::new(AtomicUsize::new(0));
    (Probe { polls: polls.clone(), drops: drops.clone() }, polls, drops)
}

#[test]
fn biased_select_takes_the_first_ready_branch() {
    rt().block_on(async {
        for _ in 0..50 {
            let v = weft::select! {
                biased;
                v = ready(1) => v,
                v = ready(2) => v,
            };
            assert_eq!(v, 1);
        }
    });
}

#[test]
fn unbiased_select_takes_every_ready_branch_sometimes() {
    rt().block_on(async {
        let mut seen = [0usize; 3];
        for _ in 0..300 {
            let v: usize = weft::select! {
                v = ready(0) => v,
                v = ready(1) => v,
                v = ready(2) => v,
            };
            seen[v] += 1;
        }
        // Each branch wins with probability 1/3 per round; 0 wins in 300 rounds is ~1e-53.
        assert!(seen.iter().all(|&n| n > 0), "{seen:?}");
    });
}

#[test]
fn false_precondition_evaluates_but_never_polls_the_future() {
    rt().block_on(async {
        let (p, polls, drops) = probe();
        let v = weft::select! {
            _ = p, if false => 0,
            v = ready(5) => v,
        };
        assert_eq!(v, 5);
        assert_eq!(polls.load(Ordering::SeqCst), 0);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn pattern_mismatch_disables_the_branch() {
    rt().block_on(async {
        let (tx, mut rx) = weft::sync::mpsc::unbounded_channel::<u32>();
        drop(tx);
        let mut handler_runs = 0;
        let v = weft::select! {
            biased;
            Some(v) = rx.recv() => { handler_runs += 1; v }
            v = async { weft::task::yield_now().await; 9 } => v,
        };
        assert_eq!((v, handler_runs), (9, 0));
    });
}

#[test]
fn else_runs_when_every_branch_is_disabled() {
    rt().block_on(async {
        let v = weft::select! {
            Some(v) = ready(None::<u32>) => v,
            _ = pending::<()>(), if false => 1,
            else => 42,
        };
        assert_eq!(v, 42);
    });
}

#[test]
#[should_panic(expected = "all branches are disabled and there is no else branch")]
fn no_else_and_every_branch_disabled_panics() {
    rt().block_on(async {
        weft::select! {
            Some(v) = ready(None::<u32>) => v,
        }
    });
}

#[test]
fn losers_are_dropped_before_the_handler_runs() {
    rt().block_on(async {
        let (p, polls, drops) = probe();
        let (tx, mut rx) = weft::sync::mpsc::unbounded_channel::<u32>();
        tx.send(3).unwrap();
        tx.send(4).unwrap();
        weft::select! {
            _ = p => unreachable!(),
            Some(v) = rx.recv() => {
                assert_eq!(v, 3);
                assert_eq!(drops.load(Ordering::SeqCst), 1, "the losing future is dropped first");
                // `rx` was mutably borrowed by the finished branch; it is free again here.
                assert_eq!(rx.recv().await, Some(4));
            }
        }
        assert!(polls.load(Ordering::SeqCst) <= 1);
    });
}

#[test]
fn handler_may_break_and_await_and_bind_mut() {
    rt().block_on(async {
        let mut total = 0;
        let (tx, mut rx) = weft::sync::mpsc::unbounded_channel::<u32>();
        for i in 1..=4 {
            tx.send(i).unwrap();
        }
        drop(tx);
        loop {
            weft::select! {
                Some(mut v) = rx.recv() => {
                    v *= 10;
                    weft::task::yield_now().await;
                    total += v;
                }
                else => break,
            }
        }
        assert_eq!(total, 100);
    });
}

#[test]
fn join_returns_outputs_in_argument_order() {
    rt().block_on(async {
        let (a, b, c) = weft::join!(
            async {
                weft::task::yield_now().await;
                1
            },
            ready("two"),
            async { 3.0 }
        );
        assert_eq!((a, b, c), (1, "two", 3.0));
        let () = weft::join!();
    });
}

#[test]
fn biased_join_polls_in_argument_order() {
    rt().block_on(async {
        let order = std::cell::RefCell::new(Vec::new());
        let step = |id: u32| {
            let order = &order;
            async move {
                for _ in 0..2 {
                    order.borrow_mut().push(id);
                    weft::task::yield_now().await;
                }
            }
        };
        weft::join!(biased; step(0), step(1), step(2));
        assert_eq!(*order.borrow(), vec![0, 1, 2, 0, 1, 2]);
    });
}

#[test]
fn try_join_returns_the_first_error_and_drops_the_rest() {
    rt().block_on(async {
        let (p, _polls, drops) = probe();
        let r: Result<((), u32), &str> = weft::try_join!(
            async {
                p.await;
                Ok(())
            },
            async {
                weft::task::yield_now().await;
                Err("boom")
            }
        );
        assert_eq!(r, Err("boom"));
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        let ok: Result<(u32, u32), ()> = weft::try_join!(ready(Ok(1)), ready(Ok(2)));
        assert_eq!(ok, Ok((1, 2)));
    });
}

#[test]
fn pin_shadows_with_a_pinned_reference() {
    rt().block_on(async {
        let fut = async { 11 };
        weft::pin!(fut);
        fn is_pinned_ref<T>(_: &Pin<&mut T>) {}
        is_pinned_ref(&fut);
        assert_eq!(fut.await, 11);
        weft::pin! {
            let a = ready(1);
            let b = ready(2);
        }
        assert_eq!(a.await + b.await, 3);
    });
}
