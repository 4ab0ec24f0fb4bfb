//! Small runtime-internal helpers.

pub(crate) mod wake;
