//! A diagnostic peer, `weft-tasks`: `plain_tasks.rs` on weft. Not in the default peer list: it
//! separates what weft-actor adds from what the runtime itself costs
//! (`--runtimes weft-actor,weft-tasks,tokio`).

super::plain_tasks::plain_tasks_peer!(
    crate: weft,
    peer: WeftTasks,
    msg: Msg,
    name: "weft-tasks",
    documented: weft_tasks,
    block_on: super::weft_actor::block_on_weft,
);
