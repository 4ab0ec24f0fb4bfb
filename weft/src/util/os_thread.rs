//! The kernel's view of a thread: its id (the `/proc/self/task/<tid>` directory) and how long
//! it has waited for a CPU while runnable (`schedstat`'s run delay). The blocking pool uses the
//! id to count its runnable threads; the blocked-worker monitor uses the run delay to tell a
//! worker that blocked (on the CPU, or asleep in a syscall) from one that was only preempted.

/// This thread's OS id; 0 where there is none (not Linux, or under loom).
pub(crate) fn thread_id() -> i64 {
    #[cfg(all(target_os = "linux", not(loom)))]
    {
        // SAFETY: `gettid` takes no arguments, touches no memory and cannot fail.
        i64::from(unsafe { libc::gettid() })
    }
    #[cfg(not(all(target_os = "linux", not(loom))))]
    {
        0
    }
}

/// What the kernel says about one thread of this process now.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SchedSample {
    /// Time on a CPU so far (ns; `schedstat` field 1, brought up to date at each tick).
    pub(crate) on_cpu_ns: u64,
    /// Time spent runnable but waiting for a CPU so far (ns; `schedstat` field 2). A wait still
    /// in progress is added only when the thread gets a CPU again.
    pub(crate) run_wait_ns: u64,
    /// Asleep in the kernel (state `S` or `D`: neither running nor waiting for a CPU).
    pub(crate) sleeping: bool,
}

/// Thread `tid`'s [`SchedSample`], from `/proc/self/task/<tid>/{schedstat,stat}`; `None` where
/// unavailable (no schedstats, not Linux, loom, or the thread is gone).
pub(crate) fn sched_sample(tid: i64) -> Option<SchedSample> {
    if cfg!(loom) || tid <= 0 {
        return None;
    }
    let sched = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    let mut fields = sched.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
    let (on_cpu_ns, run_wait_ns) = (fields.next()??, fields.next()??);
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // `tid (comm) S ...`: the name may hold spaces or parentheses; the state follows the last `)`.
    let state = stat.get(stat.rfind(')')? + 1..)?.split_ascii_whitespace().next()?;
    Some(SchedSample { on_cpu_ns, run_wait_ns, sleeping: state == "S" || state == "D" })
}

#[cfg(all(test, not(loom), target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn this_thread_has_an_id_and_a_sched_sample() {
        let tid = thread_id();
        assert!(tid > 0);
        let s = sched_sample(tid).expect("schedstat and stat readable for this thread");
        assert!(!s.sleeping, "the thread reading its own state is running");
        assert!(sched_sample(i64::MAX).is_none());
    }
}
