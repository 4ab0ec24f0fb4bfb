//! A `LocalSet` entered through its guard (`LocalSet::enter`) and then run: a task of the set
//! woken by the runtime's driver on this same thread (a timer firing) still wakes the set.

use std::time::Duration;

#[test]
fn a_timer_wakes_a_local_task_spawned_under_the_enter_guard() {
    for sleep in [Duration::ZERO, Duration::from_millis(2)] {
        let rt = weft::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let local = weft::task::LocalSet::new();
            let _guard = local.enter();
            let (tx, rx) = weft::sync::oneshot::channel();
            let run = local.run_until(async move {
                weft::task::spawn_local(async move {
                    weft::time::sleep(sleep).await;
                    tx.send(()).unwrap();
                });
                rx.await.unwrap();
            });
            weft::time::timeout(Duration::from_secs(10), run).await.expect("the local task was never woken");
        });
    }
}
