//! What every process handle can do to the process it names, written once for [`ActorRef`]
//! and [`SupervisorRef`]: stop it, kill it, ask whether it runs, wait for its end. Both hold
//! the process's cell, and each of these is one call on it; a macro (not a trait) keeps them
//! inherent methods, so no import is needed to call them.
//!
//! [`ActorRef`]: crate::ActorRef
//! [`SupervisorRef`]: crate::SupervisorRef

/// The four lifecycle methods, for a handle type with a `cell: CellRef` field. `$what` names
/// the process in the docs ("actor", "supervisor"); `$stop` and `$kill` say what stopping and
/// killing mean for it.
macro_rules! lifecycle_methods {
    ($what:literal, stop: $stop:literal, kill: $kill:literal) => {
        #[doc = $stop]
        pub fn stop(&self) {
            self.cell.signal($crate::cell::Signal::Stop);
        }

        #[doc = $kill]
        pub fn kill(&self) {
            self.cell.kill();
        }

        #[doc = concat!("Whether the ", $what, " is still running (false once its state has been dropped).")]
        pub fn is_alive(&self) -> bool {
            self.cell.is_alive()
        }

        #[doc = concat!("Waits until the ", $what, " has stopped and its state has been dropped; returns why")]
        #[doc = "(after a panic, its payload as a `String`: the original goes to the supervisor)."]
        pub async fn wait_stopped(&self) -> $crate::exit::ExitReason {
            self.cell.wait_stopped().await.unwrap_or($crate::exit::ExitReason::Killed)
        }
    };
}

pub(crate) use lifecycle_methods;
