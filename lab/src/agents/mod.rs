//! The multi-agent LLM study (reference report 000, "TR115").
pub mod sim;
pub mod agent;
pub mod client;
pub mod hosts;
pub mod study;
pub mod summary;
pub mod command;
pub mod charts;
