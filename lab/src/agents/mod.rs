//! The multi-agent LLM study (reference report 000, "TR115").
pub mod agent;
pub mod capacity;
pub mod charts;
pub mod child;
pub mod client;
pub mod command;
pub mod hosts;
pub mod sim;
pub mod study;
pub mod summary;
