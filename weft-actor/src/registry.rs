//! Named registration: one process-wide map from name to `ActorRef` (`names`), typed here.
//!
//! A name belongs to one incarnation: it is released when that actor stops, so a restarted
//! child registers again (in `started`) and lookups never return a dead actor's ref for long.

use std::fmt;

use crate::actor::Actor;
use crate::actor_ref::ActorRef;
use crate::names::map;

/// `register` failed: the name is taken, or the actor has already stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegisterError {
    /// Another live actor holds the name.
    AlreadyRegistered(String),
    /// The actor has stopped.
    NotAlive,
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterError::AlreadyRegistered(n) => write!(f, "name {n:?} is already registered"),
            RegisterError::NotAlive => f.write_str("actor has stopped"),
        }
    }
}

impl std::error::Error for RegisterError {}

/// Registers `actor` under `name` until it stops (or `unregister`).
pub fn register<A: Actor>(name: &str, actor: &ActorRef<A>) -> Result<(), RegisterError> {
    let mut m = map();
    if m.contains_key(name) {
        return Err(RegisterError::AlreadyRegistered(name.to_string()));
    }
    // Recorded on the cell under the map lock: if the actor stops concurrently, either it
    // sees the name and removes it, or `add_name` fails and the name is never inserted.
    if !actor.cell.add_name(name.to_string()) {
        return Err(RegisterError::NotAlive);
    }
    m.insert(name.to_string(), (actor.id(), Box::new(actor.clone())));
    Ok(())
}

/// The actor registered under `name`, if there is one and it is an `A`.
pub fn lookup<A: Actor>(name: &str) -> Option<ActorRef<A>> {
    map().get(name).and_then(|(_, r)| r.downcast_ref::<ActorRef<A>>().cloned())
}

/// Removes `name`; returns whether it was registered.
pub fn unregister(name: &str) -> bool {
    map().remove(name).is_some()
}
