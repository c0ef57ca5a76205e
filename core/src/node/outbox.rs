//! The output queue, and [`OutputRef`], the borrowed output a hot loop drains without allocating.
//!
//! A `Send` is not a `String` and a `Vec<u8>` of its own: the queue is one byte buffer whose
//! capacity the node keeps between inputs, holding one record per output, in order. A send's
//! record is its peer id's length (one byte, 1 to `MAX_ID_LEN`), the length of its bytes (a
//! LEB128 varint), the bytes, then the id. Persists and events (rare: transitions, joins,
//! payloads) wait, owned, in a second queue allocated only while one waits; their record is a
//! single 0 byte keeping their place among the sends. A steady follower's heartbeat round
//! therefore allocates nothing: the ack is written where the previous ack was.
//!
//! Memory: when the queue is found empty (the `None` that ends a drain, or the next output queued
//! after a drain that stopped early), the buffer is cleared and shrunk to the largest record it
//! held: a burst (a campaign, a leader's heartbeat round to many peers, a broadcast) is not kept,
//! one heartbeat's worth is.
//!
//! Reuse: a drained buffer whose first record was its largest, a send, keeps that record (polled)
//! in place. The next send overwrites it from the end of the envelope's shared part (header,
//! cluster, sender: the same bytes in every message of one node; and term and incarnation while
//! the term is unchanged), so a follower's ack writes only its message and peer id. The struct itself is a `Vec` and a pointer, the size of the
//! `VecDeque<Output>` it replaced: the read position is kept in the buffer's first four bytes,
//! not in a field that would make every node 8 bytes larger.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::{Event, Output};
use crate::config::DurableState;
use crate::wire::{self, DropReason, EnvelopeRef, HmacSha256};

/// One output of the node, borrowed from it: [`Node::poll_output_ref`](super::Node::poll_output_ref)
/// returns it, and the borrow ends before the next call on the node. A `Send`'s peer id and bytes
/// point into a buffer the node reuses, so draining them costs no allocation; [`Output`] is the
/// owned form (`OutputRef::into_owned`, or [`Node::poll_output`](super::Node::poll_output)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum OutputRef<'a> {
    /// Transmit `bytes` to peer `to` (best effort: loss is tolerated).
    Send {
        /// Destination peer id.
        to: &'a str,
        /// The encoded message.
        bytes: &'a [u8],
    },
    /// Store this pair durably (only with `Config::durable`) before sending anything after it.
    Persist(DurableState),
    /// Something happened.
    Event(Event),
}

impl OutputRef<'_> {
    /// The owned [`Output`] (copies a `Send`'s id and bytes; moves the rest).
    pub fn into_owned(self) -> Output {
        match self {
            OutputRef::Send { to, bytes } => Output::Send { to: String::from(to), bytes: Vec::from(bytes) },
            OutputRef::Persist(s) => Output::Persist(s),
            OutputRef::Event(e) => Output::Event(e),
        }
    }
}

/// A persist or an event, waiting in [`Outbox::other`].
#[derive(Debug)]
#[cfg_attr(feature = "model-check", derive(Clone))]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(super) enum Other {
    Persist(DurableState),
    Event(Event),
}

/// The record of an [`Other`].
const OTHER: u8 = 0;
/// Bytes of the read position at the start of the buffer.
const CURSOR: usize = 4;

/// The node's outputs, in order.
#[derive(Debug, Default)]
#[cfg_attr(feature = "model-check", derive(Clone))]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(super) struct Outbox {
    /// Empty, or the read position (the offset of the next record to poll, `u32` little-endian)
    /// then the records, in queue order.
    buf: Vec<u8>,
    /// The persists and events, in queue order; `None` when there are none. Boxed on purpose:
    /// 8 bytes in every node instead of a `Vec`'s 24, for outputs most rounds do not have. A
    /// `Vec` taken from the front, not a `VecDeque`: it holds a few outputs at a time (one
    /// input's transitions), and the ring buffer's code is most of a kilobyte of WebAssembly.
    #[allow(clippy::box_collection)]
    other: Option<Box<Vec<Other>>>,
}

fn put_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint [`put_varint`] wrote (at most four bytes: records are below `MAX_MESSAGE_SIZE`) and
/// the bytes after it.
fn take_varint(mut b: &[u8]) -> Option<(usize, &[u8])> {
    let mut v = 0usize;
    for shift in [0, 7, 14, 21] {
        let (&byte, rest) = b.split_first()?;
        b = rest;
        v |= usize::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some((v, b));
        }
    }
    None
}

/// The record at the start of `b`: its header's length, its id's length (0 for an [`Other`])
/// and its bytes' length, all within `b`.
fn record(b: &[u8]) -> Option<Record> {
    let (&to_len, rest) = b.split_first()?;
    if to_len == OTHER {
        return Some(Record { header: 1, to: 0, bytes: 0 });
    }
    let (bytes, rest) = take_varint(rest)?;
    let r = Record { header: b.len() - rest.len(), to: usize::from(to_len), bytes };
    (r.len() <= b.len()).then_some(r)
}

#[derive(Clone, Copy)]
struct Record {
    header: usize,
    to: usize,
    bytes: usize,
}

impl Record {
    fn len(self) -> usize {
        self.header.saturating_add(self.to).saturating_add(self.bytes)
    }
}

impl Outbox {
    /// Encodes `envelope` for `to` at the back of the queue, or queues nothing and returns the
    /// reason a receiver would drop it.
    pub(super) fn push_send(
        &mut self,
        to: &str,
        envelope: &EnvelopeRef<'_>,
        m: Option<&HmacSha256>,
    ) -> Result<(), DropReason> {
        let len = wire::encoded_len(envelope, m.is_some())?;
        // Every id the node sends to is a valid one (1 to `MAX_ID_LEN` bytes).
        let to_len = match u8::try_from(to.len()) {
            Ok(0) | Err(_) => return Err(DropReason::Malformed),
            Ok(n) => n,
        };
        let varint = if len < 1 << 7 {
            1
        } else if len < 1 << 14 {
            2
        } else {
            3
        };
        if varint == 1 && self.rewrite(to_len, to, len, envelope, m) {
            self.buf.extend_from_slice(to.as_bytes());
            return Ok(());
        }
        self.start_record((1 + varint + to.len()).saturating_add(len));
        self.buf.push(to_len);
        put_varint(&mut self.buf, len);
        wire::write(&mut self.buf, envelope, m, to.as_bytes());
        self.buf.extend_from_slice(to.as_bytes());
        Ok(())
    }

    /// Overwrites the polled send that [`Outbox::reset`] kept, keeping its envelope's shared part:
    /// `envelope` has the same cluster, sender and incarnation and `m` the same presence (all the
    /// node's own, fixed when it is built). Applies to a kept record whose length is one varint byte, as
    /// the new one's is (`len < 128`); `false` (nothing changed) otherwise.
    fn rewrite(
        &mut self,
        to_len: u8,
        to: &str,
        len: usize,
        envelope: &EnvelopeRef<'_>,
        m: Option<&HmacSha256>,
    ) -> bool {
        let start = CURSOR + 2;
        let shared = start.saturating_add(wire::shared_len(envelope));
        // The kept record's header is at `start`: its version byte must be the new message's.
        let ok = self.read() == self.buf.len()
            && matches!(self.buf.get(CURSOR..start), Some(&[t, l]) if t != OTHER && l < 0x80 && usize::from(l) + start >= shared)
            && self.buf.get(start + 2) == Some(&envelope.message.wire_version());
        if !ok {
            return false;
        }
        // The term and incarnation too, while the term is the kept one's.
        let same = self.buf.get(shared..).and_then(|b| wire::same_term_len(b, envelope));
        self.buf.truncate(shared.saturating_add(same.unwrap_or(0)));
        if let Some(h) = self.buf.get_mut(CURSOR..start) {
            h.copy_from_slice(&[to_len, len as u8]);
        }
        wire::write_after_shared(&mut self.buf, start, envelope, m, to.as_bytes(), same.is_none());
        self.set_read(CURSOR);
        true
    }

    pub(super) fn push_other(&mut self, o: Other) {
        self.start_record(1);
        self.other.get_or_insert_with(Box::default).push(o);
        self.buf.push(OTHER);
    }

    /// The next output; `None` (and memory given back) when the queue is empty. `leader` (the
    /// leader followed) is returned as a send's `to` when the bytes are its id: a follower's
    /// every ack then skips the UTF-8 check of the id, a tenth of its heartbeat round.
    pub(super) fn pop<'a>(&'a mut self, leader: Option<&'a str>) -> Option<OutputRef<'a>> {
        let start = self.read();
        let Some(r) = self.buf.get(start..).and_then(record) else {
            self.reset();
            return None;
        };
        self.set_read(start.saturating_add(r.len()));
        if r.to > 0 {
            let bytes_at = start.saturating_add(r.header);
            let to_at = bytes_at.saturating_add(r.bytes);
            let to = match (self.buf.get(to_at..to_at.saturating_add(r.to)), leader) {
                (Some(b), Some(l)) if b == l.as_bytes() => l,
                // The id was appended from a `&str`: the check cannot fail.
                (b, _) => b.and_then(|b| core::str::from_utf8(b).ok()).unwrap_or_default(),
            };
            let bytes = self.buf.get(bytes_at..to_at).unwrap_or_default();
            return Some(OutputRef::Send { to, bytes });
        }
        let queue = self.other.as_mut()?;
        let o = (!queue.is_empty()).then(|| queue.remove(0));
        if queue.is_empty() {
            // Rare outputs: no room kept for them.
            self.other = None;
        }
        match o? {
            Other::Persist(s) => Some(OutputRef::Persist(s)),
            Other::Event(e) => Some(OutputRef::Event(e)),
        }
    }

    /// The offset of the next record to poll.
    fn read(&self) -> usize {
        match self.buf.first_chunk::<CURSOR>() {
            Some(c) => u32::from_le_bytes(*c) as usize,
            None => CURSOR,
        }
    }

    fn set_read(&mut self, at: usize) {
        if let Some(c) = self.buf.first_chunk_mut::<CURSOR>() {
            *c = u32::try_from(at).unwrap_or(u32::MAX).to_le_bytes();
        }
    }

    /// Makes room for a record of `len` bytes at the end. A buffer whose every record was polled
    /// (a drain that stopped at its last output without polling the `None`) is reset first.
    fn start_record(&mut self, len: usize) {
        if self.read() >= self.buf.len() {
            self.reset();
            self.buf.clear();
        }
        if self.buf.is_empty() {
            self.buf.reserve(CURSOR.saturating_add(len));
            self.buf.extend_from_slice(&(CURSOR as u32).to_le_bytes());
        } else {
            self.buf.reserve(len);
        }
    }

    /// Empties the buffer (every record in it was polled), down to the capacity of the cursor and
    /// the largest record; keeps the first record, polled, when it is that largest one and a send
    /// (for [`Outbox::rewrite`]). Nothing to do when it is empty already (reset, or never used).
    fn reset(&mut self) {
        let all = self.buf.get(CURSOR..).unwrap_or_default();
        let first = record(all);
        let mut keep = first.map_or(0, Record::len);
        let mut rest = all.get(keep..).unwrap_or_default();
        while let Some(r) = record(rest) {
            keep = keep.max(r.len());
            rest = rest.get(r.len()..).unwrap_or_default();
        }
        match first {
            Some(r) if r.to > 0 && r.len() == keep => {
                self.buf.truncate(CURSOR.saturating_add(keep));
                self.set_read(self.buf.len());
            }
            _ if self.buf.len() <= CURSOR => return,
            _ => self.buf.clear(),
        }
        let keep = CURSOR.saturating_add(keep);
        if self.buf.capacity() > keep {
            self.buf.shrink_to(keep);
        }
    }

    #[cfg(test)]
    pub(super) fn capacity(&self) -> (usize, usize) {
        (self.buf.capacity(), self.other.as_ref().map_or(0, |o| o.capacity()))
    }
}

#[cfg(test)]
mod tests {
    use alloc::string::ToString;
    use alloc::vec;

    use super::*;
    use crate::counting::allocations_in;
    use crate::node::{Node, Role};
    use crate::wire::{encode, Envelope, Message};
    use crate::Config;

    fn from_b(term: u64, message: Message) -> Vec<u8> {
        let e = Envelope { cluster: "c".to_string(), from: "b".to_string(), term, incarnation: 9, message };
        encode(&e, None).unwrap()
    }

    fn heartbeat(sent_at: u64) -> Vec<u8> {
        from_b(1, Message::Heartbeat { sent_at })
    }

    /// Every output but the `Hello`s a node sends the first time it hears from a peer.
    fn drain(n: &mut Node) -> Vec<Output> {
        let mut out = Vec::new();
        while let Some(o) = n.poll_output_ref() {
            if let OutputRef::Send { bytes, .. } = &o {
                if bytes.get(2) == Some(&crate::wire::VERSION) {
                    continue;
                }
            }
            out.push(o.into_owned());
        }
        out
    }

    /// The first heartbeat of a new leader, in durable mode: the term is persisted, the leader
    /// announced and the heartbeat acknowledged, in that order, whichever poll is used.
    #[test]
    fn order_is_persist_event_send_with_either_poll() {
        let config = Config::new("a", "c").bootstrap(["a", "b", "d"]).durable(true);
        let (mut by_ref, mut owned) =
            (Node::new(config.clone(), 1, None, 0).unwrap(), Node::new(config, 1, None, 0).unwrap());
        for n in [&mut by_ref, &mut owned] {
            n.handle_message(5, "b", &heartbeat(100)).unwrap();
        }
        let refs = drain(&mut by_ref);
        let mut owneds = Vec::new();
        while let Some(o) = owned.poll_output() {
            if !matches!(&o, Output::Send { bytes, .. } if bytes.get(2) == Some(&crate::wire::VERSION)) {
                owneds.push(o);
            }
        }
        assert_eq!(refs, owneds);
        let kinds: Vec<&str> = refs
            .iter()
            .map(|o| match o {
                Output::Persist(_) => "persist",
                Output::Event(_) => "event",
                Output::Send { .. } => "send",
            })
            .collect();
        assert_eq!(kinds, ["persist", "event", "send"]);
        let Output::Send { to, bytes } = &refs[2] else { unreachable!() };
        assert_eq!(to, "b");
        let ack = Node::new(Config::new("x", "c"), 1, None, 0).unwrap().decode_message(bytes).unwrap();
        assert_eq!(ack.message, Message::HeartbeatAck { echo: 100 });
    }

    #[test]
    fn a_steady_heartbeat_round_allocates_nothing_and_keeps_one_ack() {
        let mut n = Node::new(Config::new("a", "c").bootstrap(["a", "b", "d"]), 1, None, 0).unwrap();
        for t in 1..4 {
            n.handle_message(t, "b", &heartbeat(t)).unwrap();
            drain(&mut n);
        }
        assert_eq!(n.role(), Role::Follower);
        let hb = heartbeat(10);
        let mut ack_len = 0;
        let allocations = allocations_in(|| {
            n.handle_message(10, "b", &hb).unwrap();
            match n.poll_output_ref() {
                Some(OutputRef::Send { to: "b", bytes }) => ack_len = bytes.len(),
                other => panic!("expected the ack, got {other:?}"),
            }
            assert!(n.poll_output_ref().is_none());
        });
        assert_eq!(allocations, 0);
        assert_eq!(n.outbox.capacity(), (CURSOR + 2 + "b".len() + ack_len, 0));
    }

    /// A host that stops polling at the last output (no `None`) still gets each ack's own bytes,
    /// and the buffer does not grow.
    #[test]
    fn a_drain_without_the_final_none_reuses_the_buffer() {
        let mut n = Node::new(Config::new("a", "c").bootstrap(["a", "b", "d"]), 1, None, 0).unwrap();
        n.handle_message(1, "b", &heartbeat(1)).unwrap();
        drain(&mut n);
        let mut caps = Vec::new();
        for t in 2..6 {
            n.handle_message(t, "b", &heartbeat(t * 10)).unwrap();
            let Some(OutputRef::Send { bytes, .. }) = n.poll_output_ref() else { panic!("no ack") };
            let ack = Node::new(Config::new("x", "c"), 1, None, 0).unwrap().decode_message(bytes).unwrap();
            assert_eq!(ack.message, Message::HeartbeatAck { echo: t * 10 });
            caps.push(n.outbox.capacity().0);
        }
        assert!(caps.windows(2).all(|w| w[0] == w[1]), "{caps:?}");
    }

    /// Sends written over the kept record are byte for byte the full encoding, across term
    /// changes, destinations and kinds, with and without a key.
    #[test]
    fn a_rewritten_send_is_the_full_encoding() {
        for key in [None, Some(&b"k"[..])] {
            let mut config = Config::new("a", "c").bootstrap(["a", "b", "dd"]);
            if let Some(k) = key {
                config = config.key(k.to_vec());
            }
            let mut n = Node::new(config, 1, None, 0).unwrap();
            let from = |from: &str, term, message| {
                let e = Envelope { cluster: "c".to_string(), from: from.to_string(), term, incarnation: 9, message };
                encode(&e, key.map(|key| crate::wire::Auth { key, receiver: "a" })).unwrap()
            };
            let inputs = [
                ("b", from("b", 1, Message::Heartbeat { sent_at: 1 })),
                ("b", from("b", 1, Message::Heartbeat { sent_at: 2 })),
                ("b", from("b", 2, Message::Heartbeat { sent_at: 300 })),
                ("b", from("b", 200, Message::Heartbeat { sent_at: 4 })),
                ("dd", from("dd", 201, Message::PreVote)),
                ("b", from("b", 201, Message::Heartbeat { sent_at: 5 })),
            ];
            let mut sends = 0;
            for (t, (peer, bytes)) in inputs.iter().enumerate() {
                n.handle_message(t as u64 + 1, peer, bytes).unwrap();
                while let Some(o) = n.poll_output_ref() {
                    if let OutputRef::Send { to, bytes } = o {
                        // Hellos (the first message from a peer is answered with one) are
                        // rewritten sends too, of another version: checked, not counted.
                        sends += usize::from(bytes.get(2) != Some(&crate::wire::VERSION));
                        assert_eq!(to, *peer);
                        let auth = key.map(|key| crate::wire::Auth { key, receiver: to });
                        let e = crate::wire::decode(bytes, auth).unwrap();
                        assert_eq!(encode(&e, auth).unwrap(), bytes, "{e:?}");
                    }
                }
            }
            assert_eq!(sends, inputs.len());
        }
    }

    /// A burst (pre-votes to 20 peers) is given back when drained: one pre-vote's worth is kept.
    #[test]
    fn a_burst_is_given_back() {
        let peers: Vec<String> = (0..20).map(|i| alloc::format!("peer-{i:02}")).collect();
        let config = Config::new("a", "c").bootstrap(peers.iter().cloned().chain(["a".to_string()]));
        let mut n = Node::new(config, 1, None, 0).unwrap();
        let t = n.poll_timeout().unwrap();
        n.handle_timeout(t);
        let mut sends = vec![];
        while let Some(o) = n.poll_output_ref() {
            if let OutputRef::Send { to, bytes } = o {
                // The record: two length bytes (both below 128 here), the bytes, the id.
                sends.push(2 + to.len() + bytes.len());
            }
        }
        assert_eq!(sends.len(), 20);
        let largest = CURSOR + *sends.iter().max().unwrap();
        assert_eq!(n.outbox.capacity(), (largest, 0));
        // A second `None` keeps that.
        assert!(n.poll_output_ref().is_none());
        assert_eq!(n.outbox.capacity(), (largest, 0));
    }

    #[test]
    fn an_event_queue_is_freed_when_drained() {
        let mut n = Node::new(Config::new("a", "c").bootstrap(["a", "b", "d"]), 1, None, 0).unwrap();
        n.handle_message(1, "b", &from_b(1, Message::App { seq: 1, payload: vec![7] })).unwrap();
        let out = drain(&mut n);
        assert!(matches!(&out[..], [Output::Event(crate::Event::Message { payload, .. })] if payload == &[7]));
        assert_eq!(n.outbox.capacity().1, 0);
    }
}
