//! Supervisor behaviour that needs crate internals: a child whose task is dropped by its
//! runtime's shutdown is not restarted. The child runs on a runtime of its own (`spawned_on`),
//! so that runtime can be shut down while the supervisor keeps running and answering — the
//! race "restart while the runtime shuts down" made deterministic. Also: literal child ids are
//! borrowed, not copied, and a restart on the supervisor's thread builds the new incarnation in
//! the dead one's memory.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{ChildSpec, Restart, Strategy, SupervisorEvent, SupervisorSpec};
use crate::actor::{Actor, Context};
use crate::actor_ref::Mailbox;

struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Actor for Counted {
    type Msg = ();
    async fn handle(&mut self, _msg: (), _ctx: &mut Context<Self>) {}
}

fn runtime() -> weft::runtime::Runtime {
    weft::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

#[test]
fn child_dropped_by_runtime_shutdown_is_not_restarted() {
    let (created, drops, restarted) =
        (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let sup_rt = runtime();
    let child_rt = runtime();
    let child = {
        let (created, drops) = (created.clone(), drops.clone());
        ChildSpec::spawned_on("c", Mailbox::default(), Some(child_rt.handle().clone()), move || {
            created.fetch_add(1, Ordering::SeqCst);
            Counted(drops.clone())
        })
        .restart(Restart::Permanent)
    };
    let r = restarted.clone();
    let spec = SupervisorSpec::new(Strategy::OneForAll)
        .intensity(100, Duration::from_secs(3600))
        .on_event(move |e| {
            if let SupervisorEvent::ChildRestarted { .. } = e {
                r.fetch_add(1, Ordering::SeqCst);
            }
        })
        .child(child);
    let sup = sup_rt.block_on(spec.start());
    assert_eq!((created.load(Ordering::SeqCst), drops.load(Ordering::SeqCst)), (1, 0));

    // Shutting the child's runtime down drops its task: state dropped once, exit `Killed`,
    // not caused by weft-actor.
    drop(child_rt);
    assert_eq!(drops.load(Ordering::SeqCst), 1);

    // Signals are handled in order: the child's exit before this query.
    let children = sup_rt.block_on(sup.which_children());
    assert_eq!(children.len(), 1);
    assert_eq!(children[0].actor, None, "the dropped child is not running again");
    assert_eq!(children[0].restarts, 0);
    assert_eq!(restarted.load(Ordering::SeqCst), 0);
    assert_eq!(created.load(Ordering::SeqCst), 1, "no new incarnation was built");

    sup_rt.block_on(async {
        sup.stop();
        sup.wait_stopped().await;
    });
    assert!(!sup.is_alive());
    assert_eq!(drops.load(Ordering::SeqCst), created.load(Ordering::SeqCst));
}

/// A literal id is borrowed by the spec and its clones (every restart of a sub-supervisor clones
/// its whole spec, children included); a `String` id is owned. Callers see the same ids.
#[test]
fn literal_child_ids_are_not_copied_into_strings() {
    use std::borrow::Cow;
    let literal = ChildSpec::new("worker", || Counted(Arc::new(AtomicUsize::new(0))));
    let owned = ChildSpec::new(format!("worker-{}", 2), || Counted(Arc::new(AtomicUsize::new(0))));
    assert!(matches!(literal.clone().id, Cow::Borrowed("worker")));
    assert!(matches!(&owned.id, Cow::Owned(s) if s == "worker-2"));
    let rt = runtime();
    rt.block_on(async {
        let sup = SupervisorSpec::new(Strategy::OneForOne).child(literal).child(owned).start().await;
        let ids: Vec<_> = sup.which_children().await.into_iter().map(|c| c.id).collect();
        assert_eq!(ids, ["worker", "worker-2"]);
        sup.stop();
        sup.wait_stopped().await;
    });
}

/// Answers `Where` with the address of its state (inside its task's cell; a field, since a
/// zero-sized state has no memory of its own); panics on `Crash`.
struct Probe(u64);

enum ProbeMsg {
    Where(crate::Reply<usize>),
    Crash,
}

impl Actor for Probe {
    type Msg = ProbeMsg;
    async fn handle(&mut self, msg: ProbeMsg, _ctx: &mut Context<Self>) {
        match msg {
            ProbeMsg::Where(r) => {
                let _ = r.send(&self.0 as *const u64 as usize);
            }
            ProbeMsg::Crash => panic!("probe told to crash"),
        }
    }
}

/// Restarts reuse the dead incarnation's memory: on the supervisor's thread, the
/// dead incarnation's task, mailbox and cell go back to the thread's arena cache (LIFO per size
/// class) before the restart builds the new ones, which therefore take the same slots. Checked
/// by address: the new incarnation's state sits where the old one's did (same task slot) and
/// its cell is the old cell's slot. A current-thread runtime with the arena on (explicitly, so
/// `WEFT_TASK_ARENA=0` runs of the suite keep the check), so "the supervisor's thread" is the
/// only thread.
#[test]
fn a_restart_on_the_supervisors_thread_reuses_the_dead_incarnations_slots() {
    let rt = weft::runtime::Builder::new_current_thread().task_arena(true).enable_all().build().unwrap();
    rt.block_on(async {
        let (tx, rx) = weft::sync::mpsc::unbounded_channel::<()>();
        let sup = SupervisorSpec::new(Strategy::OneForOne)
            .intensity(10, Duration::from_secs(3600))
            .on_event(move |e| {
                if let SupervisorEvent::ChildRestarted { .. } = e {
                    let _ = tx.send(());
                }
            })
            .child(ChildSpec::new("probe", || Probe(0)))
            .start()
            .await;
        let mut rx = rx;
        let mut seen = Vec::new();
        for round in 0..3 {
            let (_, child) = sup.children::<Probe>().await.pop().expect("the probe runs");
            let state = child.ask(ProbeMsg::Where).await.expect("the probe answers");
            let cell = &*child.cell as *const crate::cell::Cell as usize;
            seen.push((state, cell));
            if round == 2 {
                break;
            }
            child.tell(ProbeMsg::Crash).await.expect("the probe is alive");
            // No reference of ours may keep the dead incarnation's cell or mailbox alive.
            drop(child);
            rx.recv().await.expect("the supervisor restarts the probe");
        }
        assert!(
            seen.windows(2).all(|w| w[0] == w[1]),
            "each incarnation (state address, cell address) should reuse the previous one's slots: {seen:x?}"
        );
        sup.stop();
        sup.wait_stopped().await;
    });
}
