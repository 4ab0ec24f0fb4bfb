//! `catch_unwind_panics`: N tasks that panic, each joined and seen as a panic. The runner
//! silences the panic hook around this workload for every runtime alike (printing 10,000
//! messages would measure the terminal, not the runtime).

use std::hint::black_box;

use super::expect_eq;
use crate::framework::adapter::Adapter;

/// N panicking tasks spawned from inside a task; every join must report the panic.
pub async fn catch_unwind_panics<R: Adapter>(n: u64) -> Result<(), String> {
    super::inside::<R, _>(async move {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                R::spawn(async move {
                    if black_box(true) {
                        panic!("weft-lab: deliberate panic");
                    }
                    i
                })
            })
            .collect();
        let mut panicked = 0u64;
        for handle in handles {
            if R::join(handle).await.is_err() {
                panicked += 1;
            }
        }
        expect_eq("tasks seen as panicked", panicked, n)
    })
    .await
}
