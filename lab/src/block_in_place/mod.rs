//! `weft-lab block-in-place`: throughput of a mix of async work and `block_in_place` calls,
//! weft vs tokio (the only two runtimes with `block_in_place`, so this names both crates
//! directly instead of going through `Adapter`, which has no such operation).
//!
//! Each sample builds a 2-worker runtime, runs `tasks` tasks that each do `iters` rounds of
//! { yield, `block_in_place` around a ~`work_us` µs busy loop }, and drops the runtime; the
//! wall time is the sample. Samples alternate weft/tokio (interleaved), and the report gives
//! the medians and the median of the per-pair ratios weft ÷ tokio with a bootstrap CI.
//! Validation: every task returns its iteration count.

use std::time::{Duration, Instant};

use crate::framework::stats;
use std::process::ExitCode;

fn spin(d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// One sample on a fresh 2-worker runtime of the crate `$rt` (weft and tokio have the same API):
/// `tasks` tasks, each `iters` times yielding and then spinning `work` inside `block_in_place`;
/// every task's count is checked.
macro_rules! sample_on {
    ($name:ident, $rt:ident) => {
        fn $name(tasks: u64, iters: u64, work: Duration) -> Result<Duration, String> {
            let rt = $rt::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            let start = Instant::now();
            let done = rt.block_on(async move {
                let hs: Vec<_> = (0..tasks)
                    .map(|_| {
                        $rt::spawn(async move {
                            for _ in 0..iters {
                                $rt::task::yield_now().await;
                                $rt::task::block_in_place(|| spin(work));
                            }
                            iters
                        })
                    })
                    .collect();
                let mut n = 0;
                for h in hs {
                    n += h.await.map_err(|e| e.to_string())?;
                }
                Ok::<_, String>(n)
            })?;
            let took = start.elapsed();
            drop(rt);
            if done != tasks * iters {
                return Err(format!("{}: {done} of {} iterations", stringify!($rt), tasks * iters));
            }
            Ok(took)
        }
    };
}

sample_on!(sample_weft, weft);
sample_on!(sample_tokio, tokio);

/// Runs `samples` interleaved pairs and returns the Markdown report.
pub fn measure(samples: usize, tasks: u64, iters: u64, work: Duration) -> Result<String, String> {
    let (mut w, mut t) = (Vec::new(), Vec::new());
    for i in 0..samples {
        // Alternate which runtime goes first in a pair.
        let (a, b) = if i % 2 == 0 {
            let a = sample_weft(tasks, iters, work)?;
            (a, sample_tokio(tasks, iters, work)?)
        } else {
            let b = sample_tokio(tasks, iters, work)?;
            (sample_weft(tasks, iters, work)?, b)
        };
        w.push(a.as_secs_f64() * 1e3);
        t.push(b.as_secs_f64() * 1e3);
    }
    let r = stats::paired_ratio(&w, &t, 0x5EED);
    Ok(format!(
        "# block_in_place throughput\n\n2 workers, {tasks} tasks × {iters} × (yield + block_in_place around a \
         {} µs spin), {samples} interleaved pairs. Lower is better.\n\n| runtime | median |\n|---|---|\n\
         | weft-mt | {:.1} ms |\n| tokio-mt | {:.1} ms |\n\nweft ÷ tokio (median of pair ratios): {:.3} \
         (95% CI {:.3}–{:.3})\n",
        work.as_micros(),
        stats::median(&w),
        stats::median(&t),
        r.median,
        r.ci95.0,
        r.ci95.1
    ))
}

/// `weft-lab block-in-place`'s flags.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Interleaved weft/tokio pairs.
    #[arg(long, default_value_t = 10)]
    pub samples: usize,
    #[arg(long, default_value_t = 64)]
    pub tasks: u64,
    #[arg(long, default_value_t = 100)]
    pub iters: u64,
    /// Busy work inside each `block_in_place`, in µs.
    #[arg(long, default_value_t = 20)]
    pub work_us: u64,
}

/// `weft-lab block-in-place`.
pub fn run(args: Args) -> Result<ExitCode, String> {
    let md = measure(args.samples.max(1), args.tasks, args.iters, Duration::from_micros(args.work_us))?;
    print!("{md}");
    Ok(ExitCode::SUCCESS)
}
