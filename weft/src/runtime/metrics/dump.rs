//! The task dump: `Handle::dump_tasks()` lists the runtime's live tasks with their id, spawn
//! location and state, read from the owned-task lists under their shard locks.
//!
//! What is listed: tasks in the owned lists, i.e. every task that has gone idle at least once
//! (tasks join the list lazily, see `task/list.rs`). A task that is queued for its first poll
//! or is in its first poll is not listed yet. Per-task age, poll count and poll time are not
//! recorded (not done: they need per-task fields written on every poll).

use std::panic::Location;

use crate::task::Id;

/// What a task is doing at the moment of the dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskState {
    /// Waiting for a wake-up.
    Idle,
    /// Woken and queued to run.
    Scheduled,
    /// Being polled now.
    Running,
    /// Finished (or cancelled) and about to leave the list.
    Complete,
}

/// One live task in a [`Handle::dump_tasks`](crate::runtime::Handle::dump_tasks) result.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TaskInfo {
    pub id: Id,
    /// The `spawn` call that created the task.
    pub spawn_location: &'static Location<'static>,
    pub state: TaskState,
}
