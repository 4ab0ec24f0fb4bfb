//! The process-wide name table, untyped: name → (owner's id, its ref as `dyn Any`). The typed
//! API over it is `registry`; a cell only needs to drop its names when its actor stops, which
//! this module gives it without knowing actor types.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::exit::ActorId;

pub(crate) type Map = HashMap<String, (ActorId, Box<dyn Any + Send + Sync>)>;

/// The table, locked. A panic while it was held cannot leave a half-made entry (each change is
/// one `HashMap` call), so a poisoned lock is taken as it is.
pub(crate) fn map() -> MutexGuard<'static, Map> {
    static MAP: OnceLock<Mutex<Map>> = OnceLock::new();
    MAP.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner())
}

/// Called by `Cell::exit`: drops the names `id` still holds. The removed refs are dropped
/// after the map lock is released.
pub(crate) fn remove_names(id: ActorId, names: Vec<String>) {
    if names.is_empty() {
        return;
    }
    let mut removed = Vec::new();
    {
        let mut m = map();
        for n in names {
            if m.get(&n).is_some_and(|(owner, _)| *owner == id) {
                removed.extend(m.remove(&n));
            }
        }
    }
    drop(removed);
}
