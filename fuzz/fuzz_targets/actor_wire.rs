//! weft-actor-remote's wire format (what a node reads from the network): any bytes decode to
//! an envelope or a `WireError` without panicking, and a decoded envelope survives a round
//! trip unchanged (re-encoded and decoded again, it is the same frame). Bytes are not unique:
//! postcard reads a varint with redundant continuation bytes (`a8 00` = 40) as the value.
#![no_main]

use libfuzzer_sys::fuzz_target;

// The module itself, not the crate: weft-actor-remote pulls in Zenoh, which the instrumented
// build does not need (wire.rs uses only serde and postcard).
#[path = "../../weft-actor-remote/src/wire.rs"]
#[allow(dead_code)]
mod wire;

fuzz_target!(|data: &[u8]| {
    let limit = 64 * 1024;
    match wire::decode(data, limit) {
        Ok(env) => {
            assert!(data.len() <= limit);
            let bytes = wire::encode(env.from, env.frame.clone());
            let again = wire::decode(&bytes, limit).expect("a re-encoded frame does not decode");
            assert_eq!(again, env, "a frame changed in a round trip");
            assert!(bytes.len() <= data.len(), "the canonical encoding is longer than the input");
        }
        Err(wire::WireError::Oversized(n, max)) => assert!(n > max && n == data.len()),
        Err(_) => {}
    }
});
