//! The agent runtimes: one name per row of the study, each a (runtime, HTTP client, spawner)
//! triple around the one agent implementation ([`super::agent::run_agent`]).
//!
//! | name | runtime | client |
//! |---|---|---|
//! | `weft-mt` | weft multi-thread | hyper 1.x on weft sockets, no tokio runtime |
//! | `weft-ct` | weft current-thread + `LocalSet` | hyper 1.x on weft sockets |
//! | `weft-mt+reqwest` | weft multi-thread | reqwest through a tokio reactor bridge |
//! | `tokio-default` | tokio multi-thread | reqwest |
//! | `tokio-localset` | tokio current-thread + `LocalSet` + `spawn_local` | reqwest |
//! | `smol`, `smol-1kb` | smol executor | reqwest through the bridge (1 KB re-chunked) |
//! | `async-std` | async-std | reqwest through the bridge |
//!
//! The bridge is a 2-worker tokio runtime (`tokio-bridge` threads, as the study's
//! `Lazy<Runtime>`): reqwest's futures are polled on the host runtime inside `Handle::enter`,
//! so its connection tasks and socket readiness live on the bridge while the agents do not.
//! `--bridge async-compat` makes `weft-mt+reqwest` use the `async-compat` crate's global
//! one-thread tokio runtime instead (see [`BridgeKind`]).

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::agent::{run_agent, AgentOutcome, AgentSpec, CoordKind, Coordinator};
use super::client::{BoxFuture, Bridge, BridgeKind, HttpClient, HyperClient, ReqwestClient};
use super::sim::process_cpu;
use crate::framework::adapter::{Adapter, Flavor, RtConfig};
use crate::framework::runtimes::{async_std::AsyncStd, smol::Smol, tokio::Tokio, weft::Weft};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AgentRuntime {
    WeftMt,
    WeftCt,
    WeftMtReqwest,
    TokioDefault,
    TokioLocalset,
    Smol,
    Smol1kb,
    AsyncStd,
}

impl AgentRuntime {
    pub const ALL: [AgentRuntime; 8] = [
        AgentRuntime::WeftMt,
        AgentRuntime::WeftCt,
        AgentRuntime::WeftMtReqwest,
        AgentRuntime::TokioDefault,
        AgentRuntime::TokioLocalset,
        AgentRuntime::Smol,
        AgentRuntime::Smol1kb,
        AgentRuntime::AsyncStd,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AgentRuntime::WeftMt => "weft-mt",
            AgentRuntime::WeftCt => "weft-ct",
            AgentRuntime::WeftMtReqwest => "weft-mt+reqwest",
            AgentRuntime::TokioDefault => "tokio-default",
            AgentRuntime::TokioLocalset => "tokio-localset",
            AgentRuntime::Smol => "smol",
            AgentRuntime::Smol1kb => "smol-1kb",
            AgentRuntime::AsyncStd => "async-std",
        }
    }

    pub fn by_name(s: &str) -> Option<AgentRuntime> {
        AgentRuntime::ALL.into_iter().find(|r| r.name() == s)
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

struct AdapterSpawner<R>(PhantomData<fn() -> R>);

impl<R: Adapter> Spawner for AdapterSpawner<R> {
    fn spawn<F>(&self, f: F) -> BoxFuture<'static, Option<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let h = R::spawn(f);
        Box::pin(async move { R::join(h).await.ok() })
    }
}

struct WeftLocal;

impl Spawner for WeftLocal {
    fn spawn<F>(&self, f: F) -> BoxFuture<'static, Option<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let h = weft::task::spawn_local(f);
        Box::pin(async move { h.await.ok() })
    }
}

struct TokioLocal;

impl Spawner for TokioLocal {
    fn spawn<F>(&self, f: F) -> BoxFuture<'static, Option<F::Output>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let h = tokio::task::spawn_local(f);
        Box::pin(async move { h.await.ok() })
    }
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
async fn drive<R: Adapter, C: HttpClient, S: Spawner>(plan: &RunPlan, client: Arc<C>, spawner: S) -> Batch {
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

fn bridge(workers: usize) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers.max(1))
        .thread_name("tokio-bridge")
        .enable_all()
        .build()
        .map_err(|e| format!("building the tokio bridge: {e}"))
}

fn build<R: Adapter>(flavor: Flavor, workers: usize) -> Result<R, String> {
    R::build(&RtConfig::new(flavor, workers)).map_err(|e| format!("building the runtime: {e}"))
}

/// Builds `rt`'s runtime (and bridge), runs `plan`, drops them.
pub fn run(rt: AgentRuntime, plan: &RunPlan) -> Result<Batch, String> {
    let mt = Flavor::MultiThread;
    let w = plan.workers;
    let batch = match rt {
        AgentRuntime::WeftMt => {
            let r: Weft = build(mt, w)?;
            r.block_on(drive::<Weft, _, _>(
                plan,
                Arc::new(HyperClient::<Weft>::default()),
                AdapterSpawner::<Weft>(PhantomData),
            ))
        }
        AgentRuntime::WeftCt => {
            let r: Weft = build(Flavor::CurrentThread, 1)?;
            r.block_on(async {
                weft::task::LocalSet::new()
                    .run_until(drive::<Weft, _, _>(plan, Arc::new(HyperClient::<Weft>::default()), WeftLocal))
                    .await
            })
        }
        AgentRuntime::WeftMtReqwest if plan.bridge == BridgeKind::AsyncCompat => {
            let client = Arc::new(ReqwestClient::with_bridge(Bridge::AsyncCompat, false)?);
            let r: Weft = build(mt, w)?;
            r.block_on(drive::<Weft, _, _>(plan, client, AdapterSpawner::<Weft>(PhantomData)))
        }
        AgentRuntime::WeftMtReqwest => {
            let b = bridge(plan.bridge_workers)?;
            let client = Arc::new(ReqwestClient::new(Some(b.handle().clone()), false)?);
            let r: Weft = build(mt, w)?;
            let out = r.block_on(drive::<Weft, _, _>(plan, client, AdapterSpawner::<Weft>(PhantomData)));
            drop(r);
            drop(b);
            out
        }
        AgentRuntime::TokioDefault => {
            let r: Tokio = build(mt, w)?;
            let client = Arc::new(ReqwestClient::new(None, false)?);
            r.block_on(drive::<Tokio, _, _>(plan, client, AdapterSpawner::<Tokio>(PhantomData)))
        }
        AgentRuntime::TokioLocalset => {
            let r: Tokio = build(Flavor::CurrentThread, 1)?;
            let client = Arc::new(ReqwestClient::new(None, false)?);
            r.block_on(async {
                tokio::task::LocalSet::new().run_until(drive::<Tokio, _, _>(plan, client, TokioLocal)).await
            })
        }
        AgentRuntime::Smol | AgentRuntime::Smol1kb => {
            let b = bridge(plan.bridge_workers)?;
            let client = Arc::new(ReqwestClient::new(Some(b.handle().clone()), rt == AgentRuntime::Smol1kb)?);
            let r: Smol = build(mt, w)?;
            let out = r.block_on(drive::<Smol, _, _>(plan, client, AdapterSpawner::<Smol>(PhantomData)));
            drop(r);
            drop(b);
            out
        }
        AgentRuntime::AsyncStd if std::env::var_os(crate::framework::runtimes::async_std::CHILD_ENV).is_none() => {
            return super::child::run_in_child(rt, plan);
        }
        AgentRuntime::AsyncStd => {
            let b = bridge(plan.bridge_workers)?;
            let client = Arc::new(ReqwestClient::new(Some(b.handle().clone()), false)?);
            let r: AsyncStd = build(mt, w)?;
            let out = r.block_on(drive::<AsyncStd, _, _>(plan, client, AdapterSpawner::<AsyncStd>(PhantomData)));
            drop(b);
            out
        }
    };
    Ok(batch)
}
