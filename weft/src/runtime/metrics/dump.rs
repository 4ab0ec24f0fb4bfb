//! The task dump: `Handle::dump_tasks()` lists the runtime's live tasks with their id, spawn
//! location, state, age, poll count and poll time, read from the owned-task lists under their
//! shard locks (the per-task counters are in `task/stats.rs`).
//!
//! What is listed: tasks in the owned lists, i.e. every task that has gone idle at least once
//! (tasks join the list lazily, see `task/list.rs`). A task that is queued for its first poll
//! or is in its first poll is not listed yet.

use std::panic::Location;
use std::time::Duration;

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

impl TaskState {
    /// The state as a lower-case word (`idle`, `scheduled`, `running`, `complete`), as the
    /// `/tasks` endpoint writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Idle => "idle",
            TaskState::Scheduled => "scheduled",
            TaskState::Running => "running",
            TaskState::Complete => "complete",
        }
    }
}

/// One live task in a [`Handle::dump_tasks`](crate::runtime::Handle::dump_tasks) result.
///
/// weft only: tokio's task dump (unstable) gives backtraces, not counters.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TaskInfo {
    pub id: Id,
    /// The `spawn` call that created the task.
    pub spawn_location: &'static Location<'static>,
    pub state: TaskState,
    /// Time since the task first went idle (joined the owned list; millisecond resolution).
    /// Not since `spawn`: that would cost a clock read per spawn.
    pub age: Duration,
    /// Polls so far, including one in progress; saturates at 2^31 − 1 (2.1 billion; at
    /// `u32::MAX` when the runtime times polls).
    pub poll_count: u64,
    /// Total time spent in polls; `None` unless the runtime times polls
    /// (`Builder::enable_metrics_poll_time_histogram`).
    pub total_poll_time: Option<Duration>,
    /// The longest single poll (microsecond resolution); `None` as for `total_poll_time`.
    pub max_poll_time: Option<Duration>,
}
