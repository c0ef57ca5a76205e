//! The flat output representation: how `NativeNode.drainInto` hands the core's outputs to
//! JavaScript without building one JS object per output.
//!
//! Building an object through Node-API costs a call per property plus a separately allocated
//! `Buffer` per byte string; that was most of a follower's per-heartbeat cost. Instead, the addon
//! writes every pending output as a record into one byte buffer that the JS layer owns and reuses
//! (`node/lib/outputs.js`), and the JS layer builds the public `Output` objects from it with
//! plain object literals. Peer ids cross once: the first record that names a string is preceded
//! by a `DEFINE` record giving it an index, and later records carry only the index.
//!
//! Layout (little-endian; the same table is in `bindings/node/README.md`):
//!
//! | tag | record | body |
//! | ---: | --- | --- |
//! | 0 | send | `to: str`, `len: u32`, `len` bytes |
//! | 1 | persist | `term: u64`, `votedFor: opt_str` |
//! | 2 | became_leader | `term: u64` |
//! | 3 | became_follower | `term: u64`, `leader: opt_str` |
//! | 4 | peer_joined | `peer: str` |
//! | 5 | peer_left | `peer: str` |
//! | 6 | confirm_leader | `term: u64` |
//! | 7 | message | `from: str`, `len: u32`, `len` bytes |
//! | 8 | define (not an output) | `index: u32`, `len: u32`, `len` bytes of UTF-8 |
//! | 9 | reset (not an output) | – (forget every defined string) |
//!
//! `str` is a `u32` index defined earlier in the stream, `opt_str` the same or `0xFFFF_FFFF` for
//! none, `u64` two `u32`s (low word first). At most [`MAX_STRINGS`] strings are defined at once;
//! the next new one first resets the table, so a node that meets ever new peer ids keeps a bounded
//! table on both sides.

use std::collections::HashMap;

use tenure::{DurableState, Event, OutputRef};

pub const SEND: u8 = 0;
pub const PERSIST: u8 = 1;
pub const BECAME_LEADER: u8 = 2;
pub const BECAME_FOLLOWER: u8 = 3;
pub const PEER_JOINED: u8 = 4;
pub const PEER_LEFT: u8 = 5;
pub const CONFIRM_LEADER: u8 = 6;
pub const MESSAGE: u8 = 7;
pub const DEFINE: u8 = 8;
pub const RESET: u8 = 9;
/// `opt_str` for none.
pub const NONE: u32 = u32::MAX;
/// Strings defined at once before the table is reset.
pub const MAX_STRINGS: usize = 4096;

/// The encoder: the encoded records not yet handed over, and the strings defined so far.
#[derive(Default)]
pub struct FlatOutputs {
    buf: Vec<u8>,
    strings: HashMap<String, u32>,
    /// The string named last and its index: a follower names only its leader, so most lookups
    /// end here without hashing.
    last: Option<(String, u32)>,
}

impl FlatOutputs {
    /// Appends one output's record (after the `DEFINE`/`RESET` records it needs).
    pub fn push(&mut self, out: OutputRef<'_>) {
        match out {
            OutputRef::Send { to, bytes } => {
                let to = self.string(to);
                self.buf.push(SEND);
                self.u32(to);
                self.bytes(bytes);
            }
            OutputRef::Persist(DurableState { term, voted_for }) => {
                let voted_for = self.opt_string(voted_for.as_deref());
                self.buf.push(PERSIST);
                self.u64(term);
                self.u32(voted_for);
            }
            OutputRef::Event(Event::BecameLeader { term }) => self.term(BECAME_LEADER, term),
            OutputRef::Event(Event::BecameFollower { term, leader }) => {
                let leader = self.opt_string(leader.as_deref());
                self.buf.push(BECAME_FOLLOWER);
                self.u64(term);
                self.u32(leader);
            }
            OutputRef::Event(Event::PeerJoined { peer }) => self.peer(PEER_JOINED, &peer),
            OutputRef::Event(Event::PeerLeft { peer }) => self.peer(PEER_LEFT, &peer),
            OutputRef::Event(Event::ConfirmLeader { term }) => self.term(CONFIRM_LEADER, term),
            OutputRef::Event(Event::Message { from, payload }) => {
                let from = self.string(&from);
                self.buf.push(MESSAGE);
                self.u32(from);
                self.bytes(&payload);
            }
        }
    }

    /// The records appended since the last [`FlatOutputs::clear`].
    pub fn encoded(&self) -> &[u8] {
        &self.buf
    }

    /// Forgets the records once handed over (the defined strings stay defined).
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    fn term(&mut self, tag: u8, term: u64) {
        self.buf.push(tag);
        self.u64(term);
    }

    fn peer(&mut self, tag: u8, peer: &str) {
        let peer = self.string(peer);
        self.buf.push(tag);
        self.u32(peer);
    }

    /// The index of `s`, defining it first when new.
    fn string(&mut self, s: &str) -> u32 {
        if let Some((last, i)) = &self.last {
            if last == s {
                return *i;
            }
        }
        if let Some(&i) = self.strings.get(s) {
            self.last = Some((s.to_owned(), i));
            return i;
        }
        if self.strings.len() >= MAX_STRINGS {
            self.strings.clear();
            self.buf.push(RESET);
        }
        self.last = None;
        let i = self.strings.len() as u32;
        self.buf.push(DEFINE);
        self.u32(i);
        self.bytes(s.as_bytes());
        self.strings.insert(s.to_owned(), i);
        i
    }

    fn opt_string(&mut self, s: Option<&str>) -> u32 {
        s.map_or(NONE, |s| self.string(s))
    }

    fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn u64(&mut self, v: u64) {
        self.u32(v as u32);
        self.u32((v >> 32) as u32);
    }

    fn bytes(&mut self, b: &[u8]) {
        // A record's byte string is a datagram or a broadcast payload, both bounded far below 4 GiB
        // by the core's size limits.
        self.u32(b.len() as u32);
        self.buf.extend_from_slice(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send<'a>(to: &'a str, bytes: &'a [u8]) -> OutputRef<'a> {
        OutputRef::Send { to, bytes }
    }

    #[test]
    fn a_string_is_defined_once_then_referenced() {
        let mut f = FlatOutputs::default();
        f.push(send("b", &[7]));
        f.push(send("b", &[8, 9]));
        #[rustfmt::skip]
        let want = [
            DEFINE, 0, 0, 0, 0, 1, 0, 0, 0, b'b',
            SEND, 0, 0, 0, 0, 1, 0, 0, 0, 7,
            SEND, 0, 0, 0, 0, 2, 0, 0, 0, 8, 9,
        ];
        assert_eq!(f.encoded(), want);
        f.clear();
        f.push(OutputRef::Event(Event::BecameFollower { term: (1 << 32) + 5, leader: Some("b".into()) }));
        f.push(OutputRef::Persist(DurableState { term: 3, voted_for: None }));
        #[rustfmt::skip]
        let want = [
            BECAME_FOLLOWER, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
            PERSIST, 3, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF,
        ];
        assert_eq!(f.encoded(), want);
    }

    #[test]
    fn the_last_string_is_not_reused_across_a_reset() {
        let mut f = FlatOutputs::default();
        f.push(send("a", &[1]));
        f.push(send("a", &[2]));
        for i in 1..=MAX_STRINGS {
            f.push(OutputRef::Event(Event::PeerJoined { peer: format!("p{i}") }));
        }
        f.clear();
        // The table was reset by the last peer (it now holds only that one, index 0): "a" is new.
        f.push(send("a", &[3]));
        assert_eq!(f.encoded(), [DEFINE, 1, 0, 0, 0, 1, 0, 0, 0, b'a', SEND, 1, 0, 0, 0, 1, 0, 0, 0, 3]);
    }

    #[test]
    fn the_string_table_resets_when_full() {
        let mut f = FlatOutputs::default();
        for i in 0..MAX_STRINGS {
            f.push(OutputRef::Event(Event::PeerJoined { peer: format!("p{i}") }));
        }
        assert_eq!(f.strings.len(), MAX_STRINGS);
        f.clear();
        f.push(OutputRef::Event(Event::PeerLeft { peer: "new".into() }));
        assert_eq!(f.encoded(), [RESET, DEFINE, 0, 0, 0, 0, 3, 0, 0, 0, b'n', b'e', b'w', PEER_LEFT, 0, 0, 0, 0]);
        assert_eq!(f.strings.len(), 1);
    }
}
