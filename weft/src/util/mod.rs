//! Small runtime-internal helpers.

pub(crate) mod json;
pub(crate) mod wake;
