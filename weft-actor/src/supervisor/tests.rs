//! Supervisor behaviour that needs crate internals: a child whose task is dropped by its
//! runtime's shutdown is not restarted. The child runs on a runtime of its own (`spawned_on`),
//! so that runtime can be shut down while the supervisor keeps running and answering — the
//! race "restart while the runtime shuts down" made deterministic. Also: literal child ids are
//! borrowed, not copied.

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
