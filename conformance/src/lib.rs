//! Empty: the crate exists for its test targets (see run.sh).
