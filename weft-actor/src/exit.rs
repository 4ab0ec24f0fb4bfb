//! Why an actor stopped (`ExitReason`), and the two notices others receive about it: `Exit`
//! (through a link) and `Down` (through a monitor).
//!
//! The panic payload is a `Box<dyn Any + Send>`, which cannot be cloned. The one party that
//! owns the actor's lifecycle (its supervisor, or `ActorRef::wait_stopped` when unsupervised)
//! receives the original payload; every other watcher receives `Panic` holding the panic
//! message: a `&'static str` (the payload of `panic!("literal")`) as itself, any other
//! message as a `String` (see `ExitReason::duplicate`).

use std::any::Any;
use std::fmt;

/// Process-unique identity of one actor incarnation (a restarted child gets a new id).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct ActorId(pub(crate) u64);

impl ActorId {
    pub(crate) fn next() -> ActorId {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ActorId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The id as a number (unique within the process).
    pub fn as_u64(&self) -> u64 {
        self.0
    }
}

/// A map keyed by `ActorId` that hashes with one multiply (Fibonacci hashing) instead of std's
/// SipHash: a supervisor looks up every child exit in one (`supervisor::run`), and SipHash
/// dominates that lookup (`weft-lab actors --filter panic_signal`;
/// docs/notes/performance-figures.md). Flooding is not a concern: ids come from a
/// process-wide counter, never from outside.
pub(crate) type IdMap<V> = std::collections::HashMap<ActorId, V, std::hash::BuildHasherDefault<IdHasher>>;

/// The hasher of `IdMap` (see there).
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        // The golden-ratio multiplier spreads sequential ids over the high bits, which the
        // table's probe groups and tags are taken from.
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl fmt::Display for ActorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{}>", self.0)
    }
}

/// Why an actor stopped.
pub enum ExitReason {
    /// It stopped itself (`Context::stop`) or every `ActorRef` to it was dropped.
    Normal,
    /// It was asked to stop (`ActorRef::stop`, its supervisor, or a linked actor that exited
    /// with `Shutdown`).
    Shutdown,
    /// It was aborted: `ActorRef::kill`, a `brutal_kill`/timed-out shutdown, or runtime shutdown.
    /// Its `stopped` hook did not run; its state was dropped.
    Killed,
    /// `started`, `handle` or a signal hook panicked; the payload is the panic's.
    Panic(Box<dyn Any + Send>),
}

impl ExitReason {
    /// `Normal` or `Shutdown`: the exits a `Transient` child is not restarted for (as in OTP).
    pub fn is_normal(&self) -> bool {
        matches!(self, ExitReason::Normal | ExitReason::Shutdown)
    }

    /// Whether the actor panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self, ExitReason::Panic(_))
    }

    /// The panic message when the payload is a `&str` or `String`.
    pub fn panic_message(&self) -> Option<&str> {
        match self {
            ExitReason::Panic(p) => {
                p.downcast_ref::<&'static str>().copied().or_else(|| p.downcast_ref::<String>().map(String::as_str))
            }
            _ => None,
        }
    }

    /// A copy for a second watcher: a panic payload becomes its message, a `&'static str`
    /// staying one (one allocation, the box, where a `String` copy takes two), anything else
    /// as a `String`.
    ///
    /// Inline, with the panic's copy out of line: every actor's exit makes one copy (the
    /// cell keeps it), and as one out-of-line call it costs every `spawn` more.
    #[inline]
    pub(crate) fn duplicate(&self) -> ExitReason {
        match self {
            ExitReason::Normal => ExitReason::Normal,
            ExitReason::Shutdown => ExitReason::Shutdown,
            ExitReason::Killed => ExitReason::Killed,
            ExitReason::Panic(p) => ExitReason::Panic(duplicate_panic(&**p)),
        }
    }
}

/// The copy of a panic payload `ExitReason::duplicate` hands out.
#[inline(never)]
fn duplicate_panic(p: &(dyn Any + Send)) -> Box<dyn Any + Send> {
    match (p.downcast_ref::<&'static str>(), p.downcast_ref::<String>()) {
        (Some(s), _) => Box::new(*s),
        (None, Some(s)) => Box::new(s.clone()),
        (None, None) => Box::new("<non-string panic payload>"),
    }
}

impl fmt::Debug for ExitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitReason::Normal => f.write_str("Normal"),
            ExitReason::Shutdown => f.write_str("Shutdown"),
            ExitReason::Killed => f.write_str("Killed"),
            ExitReason::Panic(_) => write!(f, "Panic({:?})", self.panic_message().unwrap_or("..")),
        }
    }
}

impl fmt::Display for ExitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A linked actor stopped. Delivered to `Actor::handle_exit` when the receiver traps exits;
/// otherwise an abnormal reason stops the receiver with the same reason.
#[derive(Debug)]
pub struct Exit {
    /// The actor that stopped.
    pub id: ActorId,
    /// Why.
    pub reason: ExitReason,
}

/// A monitored actor stopped (or was already dead when the monitor was set up).
#[derive(Debug)]
pub struct Down {
    /// The actor that stopped.
    pub id: ActorId,
    /// Why.
    pub reason: ExitReason,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hasher};

    #[test]
    fn id_hashes_spread_sequential_ids_and_depend_on_every_byte() {
        let build = std::hash::BuildHasherDefault::<IdHasher>::default();
        let tops: std::collections::HashSet<u64> = (1..=1024u64).map(|i| build.hash_one(ActorId(i)) >> 54).collect();
        assert!(tops.len() > 500, "sequential ids share the top bits: {} distinct of 1024", tops.len());
        let bytes = |b: &[u8]| {
            let mut h = IdHasher::default();
            h.write(b);
            h.finish()
        };
        assert_ne!(bytes(&[1, 2]), bytes(&[3, 2]));
        let mut m = IdMap::default();
        for i in 0..10_000 {
            m.insert(ActorId(i), i);
        }
        assert!((0..10_000).all(|i| m.get(&ActorId(i)) == Some(&i)));
    }

    #[test]
    fn a_copy_keeps_the_message_and_a_static_str_stays_one() {
        let of = |p: Box<dyn std::any::Any + Send>| ExitReason::Panic(p).duplicate();
        let lit = of(Box::new("boom"));
        assert_eq!(lit.panic_message(), Some("boom"));
        let ExitReason::Panic(p) = &lit else { panic!("{lit:?}") };
        assert!(p.downcast_ref::<&'static str>().is_some(), "a literal's copy is a &'static str");
        let owned = of(Box::new(format!("boom {}", 7)));
        assert_eq!(owned.panic_message(), Some("boom 7"));
        let ExitReason::Panic(p) = &owned else { panic!("{owned:?}") };
        assert!(p.downcast_ref::<String>().is_some(), "a formatted message's copy is a String");
        assert_eq!(of(Box::new(7u32)).panic_message(), Some("<non-string panic payload>"));
        assert!(matches!(ExitReason::Killed.duplicate(), ExitReason::Killed));
    }
}
