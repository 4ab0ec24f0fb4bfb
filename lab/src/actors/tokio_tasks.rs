//! The baseline peer: plain tokio tasks and `tokio::sync` channels (`plain_tasks.rs`).

super::plain_tasks::plain_tasks_peer!(crate: tokio, peer: TokioTasks, msg: Msg, name: "tokio", documented: tokio_tasks);
