//! Small runtime-internal helpers.

pub(crate) mod json;
pub(crate) mod os_thread;
pub(crate) mod spaced;
pub(crate) mod wake;
