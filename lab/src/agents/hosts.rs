//! The agent runtimes: one name per row of the study, each a (runtime, HTTP client, spawner)
//! triple around the one agent implementation ([`super::agent::run_agent`]).
//!
//! | name | runtime | client |
//! |---|---|---|
//! | `weft-mt` | weft multi-thread | hyper 1.x on weft sockets, no tokio runtime |
//! | `weft-ct` | weft current-thread + `LocalSet` | hyper 1.x on weft sockets |
//! | `weft-mt+reqwest` | weft multi-thread | reqwest through a tokio reactor bridge |
//! | `weft-mt+reqwest-patched` | weft multi-thread, as tokio (child process) | reqwest, natively |
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

pub use weft_lab_agent::plan::{drive, Batch, RunPlan, SpawnMode, Spawner};

use super::client::{AdapterSleep, BoxFuture, Bridge, BridgeKind, HyperClient, ReqwestClient};
use crate::framework::adapter::{Adapter, Flavor, RtConfig};
use crate::framework::runtimes::{async_std::AsyncStd, smol::Smol, tokio::Tokio, weft::Weft};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AgentRuntime {
    WeftMt,
    WeftCt,
    WeftMtReqwest,
    WeftMtReqwestPatched,
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
            AgentRuntime::WeftMtReqwestPatched => "weft-mt+reqwest-patched",
            AgentRuntime::TokioDefault => "tokio-default",
            AgentRuntime::TokioLocalset => "tokio-localset",
            AgentRuntime::Smol => "smol",
            AgentRuntime::Smol1kb => "smol-1kb",
            AgentRuntime::AsyncStd => "async-std",
        }
    }

    /// Rows run only when named (`--runtimes`): `weft-mt+reqwest-patched` first builds its
    /// own binary (`lab/services/agents-reqwest`, tokio patched to weft), minutes when cold.
    pub const OPTIONAL: [AgentRuntime; 1] = [AgentRuntime::WeftMtReqwestPatched];

    pub fn by_name(s: &str) -> Option<AgentRuntime> {
        AgentRuntime::ALL.into_iter().chain(AgentRuntime::OPTIONAL).find(|r| r.name() == s)
    }
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
            r.block_on(drive::<AdapterSleep<Weft>, _, _>(
                plan,
                Arc::new(HyperClient::<Weft>::default()),
                AdapterSpawner::<Weft>(PhantomData),
            ))
        }
        AgentRuntime::WeftCt => {
            let r: Weft = build(Flavor::CurrentThread, 1)?;
            r.block_on(async {
                weft::task::LocalSet::new()
                    .run_until(drive::<AdapterSleep<Weft>, _, _>(
                        plan,
                        Arc::new(HyperClient::<Weft>::default()),
                        WeftLocal,
                    ))
                    .await
            })
        }
        AgentRuntime::WeftMtReqwest if plan.bridge == BridgeKind::AsyncCompat => {
            let client = Arc::new(ReqwestClient::with_bridge(Bridge::AsyncCompat, false)?);
            let r: Weft = build(mt, w)?;
            r.block_on(drive::<AdapterSleep<Weft>, _, _>(plan, client, AdapterSpawner::<Weft>(PhantomData)))
        }
        AgentRuntime::WeftMtReqwest => {
            let b = bridge(plan.bridge_workers)?;
            let client = Arc::new(ReqwestClient::new(Some(b.handle().clone()), false)?);
            let r: Weft = build(mt, w)?;
            let out = r.block_on(drive::<AdapterSleep<Weft>, _, _>(plan, client, AdapterSpawner::<Weft>(PhantomData)));
            drop(r);
            drop(b);
            out
        }
        AgentRuntime::TokioDefault => {
            let r: Tokio = build(mt, w)?;
            let client = Arc::new(ReqwestClient::new(None, false)?);
            r.block_on(drive::<AdapterSleep<Tokio>, _, _>(plan, client, AdapterSpawner::<Tokio>(PhantomData)))
        }
        AgentRuntime::TokioLocalset => {
            let r: Tokio = build(Flavor::CurrentThread, 1)?;
            let client = Arc::new(ReqwestClient::new(None, false)?);
            r.block_on(async {
                tokio::task::LocalSet::new()
                    .run_until(drive::<AdapterSleep<Tokio>, _, _>(plan, client, TokioLocal))
                    .await
            })
        }
        AgentRuntime::Smol | AgentRuntime::Smol1kb => {
            let b = bridge(plan.bridge_workers)?;
            let client = Arc::new(ReqwestClient::new(Some(b.handle().clone()), rt == AgentRuntime::Smol1kb)?);
            let r: Smol = build(mt, w)?;
            let out = r.block_on(drive::<AdapterSleep<Smol>, _, _>(plan, client, AdapterSpawner::<Smol>(PhantomData)));
            drop(r);
            drop(b);
            out
        }
        AgentRuntime::WeftMtReqwestPatched => return super::child::run_patched(plan),
        AgentRuntime::AsyncStd if std::env::var_os(crate::framework::runtimes::async_std::CHILD_ENV).is_none() => {
            return super::child::run_in_child(rt, plan);
        }
        AgentRuntime::AsyncStd => {
            let b = bridge(plan.bridge_workers)?;
            let client = Arc::new(ReqwestClient::new(Some(b.handle().clone()), false)?);
            let r: AsyncStd = build(mt, w)?;
            let out = r.block_on(drive::<AdapterSleep<AsyncStd>, _, _>(
                plan,
                client,
                AdapterSpawner::<AsyncStd>(PhantomData),
            ));
            drop(b);
            out
        }
    };
    Ok(batch)
}
