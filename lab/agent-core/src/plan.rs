//! One run of the study as data ([`RunPlan`] in, [`Batch`] out, both serialisable so a child
//! process can run it) and the timed part every host runs ([`drive`]).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::agent::{run_agent, AgentOutcome, AgentSpec, CoordKind, Coordinator};
use crate::stream::{BoxFuture, HttpClient};
use crate::Sleep;

/// How reqwest finds a tokio reactor when the host runtime is not tokio (`--bridge`).
///
/// Measured 2026-11-23 on the 2-core shared box, quick profile, the two bridges alternated
/// (enter, compat, enter, compat), each run with weft-mt as the interleaved peer:
/// `weft-lab agents --quiet --runtimes weft-mt,weft-mt+reqwest --configs 3 --runs 3 --agents 32
/// --bridge B`. 2-agent mean efficiency, weft-mt+reqwest − weft-mt: enter −0.25 / +0.15 pp,
/// async-compat +0.19 / +0.17 pp. 32-agent fleet, client CPU per token: enter 17.7 / 16.6 µs
/// (peer 14.0 / 11.5), async-compat 16.7 / 16.0 µs (peer 14.9 / 15.7); efficiency − peer:
/// enter −1.7 / −0.4 pp, async-compat −1.0 / −1.9 pp. The two are within the noise (the peer
/// alone moves 11.5–15.7 µs), so `enter` stays the default: its runtime is built and dropped
/// with each run (the lab's one-runtime-alive rule), async-compat's lives until exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BridgeKind {
    /// Every poll runs inside `Handle::enter` of a lab-owned multi-thread tokio runtime
    /// (`--bridge-workers` threads, built and dropped with each run).
    Enter,
    /// The `async-compat` crate: each poll enters its global one-thread tokio runtime
    /// (`async-compat/tokio-1`), created on first use and never dropped.
    AsyncCompat,
}

impl BridgeKind {
    pub fn name(self) -> &'static str {
        match self {
            BridgeKind::Enter => "enter",
            BridgeKind::AsyncCompat => "async-compat",
        }
    }
    pub fn by_name(s: &str) -> Option<BridgeKind> {
        [BridgeKind::Enter, BridgeKind::AsyncCompat].into_iter().find(|b| b.name() == s)
    }
}

/// `--spawn`: one `join` of every agent in one task (the study's code), or a task per agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SpawnMode {
    Join,
    Tasks,
}

impl SpawnMode {
    pub fn name(self) -> &'static str {
        match self {
            SpawnMode::Join => "join",
            SpawnMode::Tasks => "tasks",
        }
    }
    pub fn by_name(s: &str) -> Option<SpawnMode> {
        [SpawnMode::Join, SpawnMode::Tasks].into_iter().find(|m| m.name() == s)
    }
}

/// What to run once.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct RunPlan {
    pub agents: Vec<AgentSpec>,
    pub spawn: SpawnMode,
    pub coordinator: CoordKind,
    /// Semaphore permits (the servers' total slots).
    pub permits: usize,
    /// Worker threads of multi-thread hosts.
    pub workers: usize,
    pub bridge_workers: usize,
    /// How `weft-mt+reqwest` bridges to tokio (`--bridge`).
    pub bridge: BridgeKind,
    /// Run the agents one after another (the measured sequential baseline).
    pub sequential: bool,
    /// The weft-lab binary, for hosts that run in a child process (async-std: its global
    /// executor cannot be shut down, so it never lives in the lab's own process).
    #[serde(skip)]
    pub exe: Option<std::path::PathBuf>,
}

/// One run's raw result.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Batch {
    pub wall: Duration,
    pub agents: Vec<AgentOutcome>,
    /// Process CPU time (user + system) during the timed part, simulator included.
    pub cpu: Duration,
}

/// Spawns one agent as a task and gives back its join (`None` = it panicked).
pub trait Spawner: Send + Sync + 'static {
    fn spawn<F>(&self, f: F) -> BoxFuture<'static, Option<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static;
}

/// Polls every future until all are done (a `join_all` for the study's "one task" mode).
async fn join_all<F: Future>(futs: Vec<F>) -> Vec<F::Output> {
    let mut futs: Vec<_> = futs.into_iter().map(Box::pin).collect();
    let mut out: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, o) in futs.iter_mut().zip(out.iter_mut()) {
            if o.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *o = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.into_iter().map(|o| o.expect("every future completed")).collect()
}

/// The timed part, identical for every host.
pub async fn drive<R: Sleep, C: HttpClient, S: Spawner>(plan: &RunPlan, client: Arc<C>, spawner: S) -> Batch {
    let coordinator = Coordinator::new(plan.coordinator, plan.permits);
    let cpu0 = process_cpu();
    let start = Instant::now();
    let agents = if plan.sequential {
        let mut v = Vec::new();
        for spec in &plan.agents {
            v.push(run_agent::<R, C>(spec, &*client, &coordinator, start).await);
        }
        v
    } else {
        match plan.spawn {
            SpawnMode::Join => {
                join_all(plan.agents.iter().map(|s| run_agent::<R, C>(s, &*client, &coordinator, start)).collect())
                    .await
            }
            SpawnMode::Tasks => {
                let joins: Vec<_> = plan
                    .agents
                    .iter()
                    .map(|spec| {
                        let (spec, client, coordinator) = (spec.clone(), client.clone(), coordinator.clone());
                        spawner.spawn(async move { run_agent::<R, C>(&spec, &*client, &coordinator, start).await })
                    })
                    .collect();
                let mut v = Vec::new();
                for (j, spec) in joins.into_iter().zip(&plan.agents) {
                    v.push(j.await.unwrap_or_else(|| AgentOutcome {
                        name: spec.name.clone(),
                        error: Some("agent task panicked".into()),
                        ..AgentOutcome::default()
                    }));
                }
                v
            }
        }
    };
    Batch { wall: start.elapsed(), agents, cpu: process_cpu().saturating_sub(cpu0) }
}

/// CPU time of this process so far (user + system, all threads).
pub fn process_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a live, writable `timespec` for the duration of the call, and
    // CLOCK_PROCESS_CPUTIME_ID is a clock every Linux kernel since 2.6.12 provides.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
