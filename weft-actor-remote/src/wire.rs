//! The wire format: one `Envelope` per Zenoh sample, encoded with postcard (serde's compact
//! binary format: varints, no field names; a 16-byte tell costs 16 + ~25 bytes of envelope).
//!
//! Every envelope starts with a version byte and carries the sender's node id, then one
//! `Frame`. Payloads (the user's messages and answers) are encoded separately by the same
//! format and carried as bytes, so a node can route a frame without knowing the message's
//! type, and a payload that does not decode is the receiving actor's `DecodeError`, not a
//! broken frame.
//!
//! Decoding is total: any byte string yields a frame or a `WireError`, never a panic, and
//! never allocates more than the input's length (postcard reads lengths from the input and
//! checks them against what is left). Input over the node's `max_message_bytes` is rejected
//! before decoding.
//!
//! Rejected alternative: bincode 1 (fixed-width integers: a tell's envelope is ~2× larger;
//! its 2.x rewrite changes the API again). JSON: 3–5× larger and ~10× slower to decode (see
//! the `wire_size` test and the README's measurement).

use serde::{Deserialize, Serialize};

/// The format's version; a node drops envelopes of another version (counted).
pub const VERSION: u8 = 1;

/// A node's id: its Zenoh session id (128 bits), shown as 32 hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub u128);

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

impl std::fmt::Debug for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NodeId({self})")
    }
}

impl std::str::FromStr for NodeId {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<NodeId, Self::Err> {
        u128::from_str_radix(s, 16).map(NodeId)
    }
}

/// One sample on a node's inbox.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Envelope<'a> {
    pub version: u8,
    pub from: NodeId,
    #[serde(borrow)]
    pub frame: Frame<'a>,
}

/// What an envelope carries. `to` is the receiving node's serve id of an actor (a name's
/// registration), `req` the asker's request number, `monitor` the watcher's monitor number.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Frame<'a> {
    Tell {
        to: u64,
        payload: &'a [u8],
    },
    Ask {
        to: u64,
        req: u64,
        payload: &'a [u8],
    },
    Answer {
        req: u64,
        outcome: Outcome<'a>,
    },
    Monitor {
        to: u64,
        monitor: u64,
    },
    Demonitor {
        monitor: u64,
    },
    Down {
        monitor: u64,
        reason: Reason,
    },
    /// Stops a served actor (`kill`: aborts it, reason `Killed`; else reason `Shutdown`).
    Stop {
        to: u64,
        kill: bool,
    },
    /// Spawns an actor from the receiving node's factory `factory` with encoded `args` and
    /// serves it under `name`; answered like an ask (the answer: the encoded serve id).
    /// `takeover`: serve even if the name is registered elsewhere (a supervisor's restart).
    Spawn {
        req: u64,
        factory: &'a str,
        name: &'a str,
        args: &'a [u8],
        takeover: bool,
    },
}

/// How a remote ask ended on the answering node.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Outcome<'a> {
    Answer(&'a [u8]),
    /// No actor is served under that id there (it stopped, or was never there).
    NotFound,
    /// The actor dropped the reply (or panicked while handling the request).
    NoReply,
    /// The request's payload did not decode as the actor's ask type.
    BadRequest,
    /// The actor's inbox there was full (the request was dropped).
    Overloaded,
    /// A spawn refused (unknown factory, name taken, …), with why.
    Refused(&'a str),
}

/// Why a monitored remote actor is gone (the `ExitReason` of weft-actor, made portable, plus
/// what only a distributed system has).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub enum Reason {
    Normal,
    Shutdown,
    Killed,
    /// It panicked; the panic's message when it was a string.
    Panic(String),
    /// It was not running when the monitor arrived (Erlang's `noproc`).
    NoProc,
    /// Its node is gone: crashed, partitioned away or shut down (Erlang's `noconnection`).
    NoConnection,
}

/// A frame that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// Longer than the node's limit (bytes, limit).
    Oversized(usize, usize),
    /// Another version of this format.
    Version(u8),
    /// Not a valid encoding.
    Malformed,
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Oversized(n, max) => write!(f, "{n}-byte frame over the {max}-byte limit"),
            WireError::Version(v) => write!(f, "wire version {v}, expected {VERSION}"),
            WireError::Malformed => f.write_str("malformed frame"),
        }
    }
}

pub fn encode(from: NodeId, frame: Frame<'_>) -> Vec<u8> {
    postcard::to_stdvec(&Envelope { version: VERSION, from, frame }).expect("encoding into a Vec cannot fail")
}

/// Reads one envelope of at most `max` bytes.
pub fn decode(bytes: &[u8], max: usize) -> Result<Envelope<'_>, WireError> {
    if bytes.len() > max {
        return Err(WireError::Oversized(bytes.len(), max));
    }
    match bytes.first() {
        None => return Err(WireError::Malformed),
        Some(&v) if v != VERSION => return Err(WireError::Version(v)),
        _ => {}
    }
    let (env, rest): (Envelope<'_>, &[u8]) = postcard::take_from_bytes(bytes).map_err(|_| WireError::Malformed)?;
    if !rest.is_empty() {
        return Err(WireError::Malformed);
    }
    Ok(env)
}

/// `encode(from, Frame::Tell { to, payload: &encode_payload(msg)? })` in one buffer: the
/// payload is serialized straight after the envelope's header instead of into a buffer of its
/// own and copied (postcard's format is fixed: a varint variant index, varint integers, and a
/// byte string as its varint length then the bytes; `tell_encoding_matches_the_envelope` checks
/// the two agree).
pub fn encode_tell<T: Serialize>(from: NodeId, to: u64, msg: &T) -> Result<Vec<u8>, postcard::Error> {
    let size = postcard::experimental::serialized_size(msg)?;
    let header = (VERSION, from, 0u32 /* Frame::Tell */, to, size);
    let mut buf = Vec::with_capacity(postcard::experimental::serialized_size(&header)? + size);
    buf = postcard::to_extend(&header, buf)?;
    postcard::to_extend(msg, buf)
}

/// A user payload (message or answer) as bytes.
pub fn encode_payload<T: Serialize>(value: &T) -> Result<Vec<u8>, postcard::Error> {
    postcard::to_stdvec(value)
}

/// A user payload from bytes (all of them).
pub fn decode_payload<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, postcard::Error> {
    postcard::from_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames() -> Vec<Frame<'static>> {
        vec![
            Frame::Tell { to: 7, payload: b"0123456789abcdef" },
            Frame::Ask { to: 1, req: u64::MAX, payload: b"" },
            Frame::Answer { req: 3, outcome: Outcome::Answer(b"yes") },
            Frame::Answer { req: 3, outcome: Outcome::Overloaded },
            Frame::Monitor { to: 9, monitor: 2 },
            Frame::Demonitor { monitor: 2 },
            Frame::Down { monitor: 2, reason: Reason::Panic("boom".into()) },
            Frame::Down { monitor: 2, reason: Reason::NoConnection },
            Frame::Stop { to: 4, kill: true },
            Frame::Spawn { req: 8, factory: "counter", name: "c-1", args: b"\x01", takeover: false },
            Frame::Answer { req: 8, outcome: Outcome::Refused("name taken") },
        ]
    }

    #[test]
    fn every_frame_round_trips() {
        let from = NodeId(0x1234_5678_9abc_def0_1122_3344_5566_7788);
        for frame in frames() {
            let bytes = encode(from, frame);
            let env = decode(&bytes, 1 << 20).unwrap();
            assert_eq!(env.from, from);
            assert_eq!(env.version, VERSION);
            // Re-encoding what was decoded gives the same bytes.
            assert_eq!(encode(env.from, env.frame), bytes);
        }
    }

    #[test]
    fn tell_encoding_matches_the_envelope() {
        #[derive(Serialize)]
        struct Msg<'a>(u64, &'a str, #[serde(with = "serde_bytes")] Vec<u8>);
        for (to, msg) in [(0, Msg(0, "", vec![])), (1 << 40, Msg(u64::MAX, "héllo", vec![9; 300]))] {
            let from = NodeId(u128::MAX - 5);
            let two_steps = encode(from, Frame::Tell { to, payload: &encode_payload(&msg).unwrap() });
            assert_eq!(encode_tell(from, to, &msg).unwrap(), two_steps);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let bytes = encode(NodeId(1), Frame::Tell { to: 1, payload: b"hello" });
        assert_eq!(decode(&bytes, 4), Err(WireError::Oversized(bytes.len(), 4)));
        assert_eq!(decode(&[], 100), Err(WireError::Malformed));
        assert_eq!(decode(&[2, 0, 0], 100), Err(WireError::Version(2)));
        for cut in 1..bytes.len() {
            assert_eq!(decode(&bytes[..cut], 100), Err(WireError::Malformed), "cut at {cut}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert_eq!(decode(&long, 100), Err(WireError::Malformed), "trailing bytes");
        // A length prefix claiming more than there is.
        assert_eq!(decode(&[VERSION, 1, 0, 1, 0xff, 0xff, 0xff, 0x0f], 100), Err(WireError::Malformed));
    }

    #[test]
    fn wire_size_postcard_against_json() {
        #[derive(Serialize)]
        struct Msg {
            id: u64,
            body: [u8; 16],
        }
        let m = Msg { id: 42, body: [7; 16] };
        let payload = encode_payload(&m).unwrap();
        let env = encode(NodeId(u128::MAX / 3), Frame::Tell { to: 3, payload: &payload });
        let json = serde_json::to_vec(&serde_json::json!({
            "version": 1, "from": format!("{}", NodeId(u128::MAX / 3)), "frame": {"Tell": {"to": 3, "payload": serde_json::to_value(m.body).unwrap(), "id": 42}}
        }))
        .unwrap();
        assert!(env.len() * 3 < json.len(), "postcard {} bytes, json {} bytes", env.len(), json.len());
        assert!(env.len() <= 50, "a 16-byte tell's envelope is {} bytes", env.len());
    }
}
