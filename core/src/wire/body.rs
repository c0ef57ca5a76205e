//! The body codec, written out by hand: LEB128 varints, length-prefixed byte strings, one-byte
//! booleans and the message kind as a varint index (`docs/wire.md`).
//!
//! It is canonical (every value has exactly one encoding: over-long varints, values past `u64`,
//! booleans other than 0/1, unknown kinds and trailing bytes are refused) and total (any input
//! is a value or a [`DropReason::Malformed`]; nothing here indexes a slice, overflows or formats).

use alloc::vec::Vec;

use super::{DropReason, EnvelopeRef, Message, RawEnvelope, MAX_TERM};

// Message kind indices on the wire. Never renumber: append.
const PRE_VOTE: u64 = 0;
const PRE_VOTE_REPLY: u64 = 1;
const VOTE: u64 = 2;
const VOTE_REPLY: u64 = 3;
const HEARTBEAT: u64 = 4;
const HEARTBEAT_ACK: u64 = 5;
const TIMEOUT_NOW: u64 = 6;
const APP: u64 = 7;
/// Version 4 and later only.
const HELLO: u64 = 8;
/// Version 4 and later only.
const DEATH_NOTICE: u64 = 9;
/// Version 4 and later only.
const VALUE: u64 = 10;
/// Version 4 and later only.
const VALUE_ACK: u64 = 11;
/// Version 4 and later only.
const PRIORITY: u64 = 12;
/// Version 4 and later only (an observer's; 12 is taken by another version 4 kind).
const OBSERVE: u64 = 13;

/// Bytes in the LEB128 encoding of `v` (1 to 10).
fn varint_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    // ceil(bits / 7) for 1 <= bits <= 64, without a division (every length is tested below).
    (bits * 9 + 64) / 64
}

/// The LEB128 encoding of `v` in a fixed buffer, and its length: the bytes [`put_varint`] appends.
pub(super) fn varint_bytes(mut v: u64) -> ([u8; 10], usize) {
    let mut buf = [0u8; 10];
    let mut n = 0;
    for b in buf.iter_mut() {
        n += 1;
        if v < 0x80 {
            *b = v as u8;
            break;
        }
        *b = (v as u8) | 0x80;
        v >>= 7;
    }
    (buf, n)
}

fn bytes_len(b: &[u8]) -> usize {
    varint_len(b.len() as u64).saturating_add(b.len())
}

fn message_len(m: &Message) -> usize {
    let fields = match m {
        Message::PreVote | Message::TimeoutNow | Message::DeathNotice => 0,
        Message::PreVoteReply { .. } | Message::Vote { .. } | Message::VoteReply { .. } => 1,
        Message::Heartbeat { sent_at: v } | Message::HeartbeatAck { echo: v } => varint_len(*v),
        Message::App { seq, payload } => varint_len(*seq).saturating_add(bytes_len(payload)),
        Message::Hello { version, .. } => varint_len(u64::from(*version)).saturating_add(1),
        Message::Value { seq, value } => varint_len(*seq).saturating_add(bytes_len(value.as_bytes())),
        Message::ValueAck { seq } => varint_len(*seq),
        Message::Priority { priority, .. } => varint_len(u64::from(*priority)).saturating_add(2),
        Message::Observe { seq } => varint_len(*seq),
    };
    fields.saturating_add(1) // every kind index is below 128: one byte
}

/// The exact length of the body [`write`] produces.
pub(super) fn encoded_len(e: &EnvelopeRef<'_>) -> usize {
    shared_len(e)
        .saturating_add(varint_len(e.term))
        .saturating_add(varint_len(e.incarnation))
        .saturating_add(message_len(e.message))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// Appends the body of `e` to `out`.
pub(super) fn write(out: &mut Vec<u8>, e: &EnvelopeRef<'_>) {
    put_bytes(out, e.cluster.as_bytes());
    put_bytes(out, e.from.as_bytes());
    write_rest(out, e, true);
}

/// The length of the body's first fields, cluster and sender: the part every message one node
/// sends has in common.
pub(super) fn shared_len(e: &EnvelopeRef<'_>) -> usize {
    bytes_len(e.cluster.as_bytes()).saturating_add(bytes_len(e.from.as_bytes()))
}

/// Appends the body of `e` after its cluster and sender; after its term and incarnation too
/// unless `term`.
pub(super) fn write_rest(out: &mut Vec<u8>, e: &EnvelopeRef<'_>, term: bool) {
    if term {
        put_varint(out, e.term);
        put_varint(out, e.incarnation);
    }
    match e.message {
        Message::PreVote => put_varint(out, PRE_VOTE),
        Message::PreVoteReply { granted } => {
            put_varint(out, PRE_VOTE_REPLY);
            out.push(u8::from(*granted));
        }
        Message::Vote { transfer } => {
            put_varint(out, VOTE);
            out.push(u8::from(*transfer));
        }
        Message::VoteReply { granted } => {
            put_varint(out, VOTE_REPLY);
            out.push(u8::from(*granted));
        }
        Message::Heartbeat { sent_at } => {
            put_varint(out, HEARTBEAT);
            put_varint(out, *sent_at);
        }
        Message::HeartbeatAck { echo } => {
            put_varint(out, HEARTBEAT_ACK);
            put_varint(out, *echo);
        }
        Message::TimeoutNow => put_varint(out, TIMEOUT_NOW),
        Message::App { seq, payload } => {
            put_varint(out, APP);
            put_varint(out, *seq);
            put_bytes(out, payload);
        }
        Message::Hello { version, reply } => {
            put_varint(out, HELLO);
            put_varint(out, u64::from(*version));
            out.push(u8::from(*reply));
        }
        Message::DeathNotice => put_varint(out, DEATH_NOTICE),
        Message::Value { seq, value } => {
            put_varint(out, VALUE);
            put_varint(out, *seq);
            put_bytes(out, value.as_bytes());
        }
        Message::ValueAck { seq } => {
            put_varint(out, VALUE_ACK);
            put_varint(out, *seq);
        }
        Message::Priority { priority, never_lead, reply } => {
            put_varint(out, PRIORITY);
            put_varint(out, u64::from(*priority));
            out.push(u8::from(*never_lead));
            out.push(u8::from(*reply));
        }
        Message::Observe { seq } => {
            put_varint(out, OBSERVE);
            put_varint(out, *seq);
        }
    }
}

/// When `b` (a body after its cluster and sender, written with the incarnation of `e`) starts
/// with the term of `e`: the length of that term and the incarnation.
pub(super) fn same_term_len(b: &[u8], e: &EnvelopeRef<'_>) -> Option<usize> {
    let mut r = Reader { rest: b };
    (r.varint() == Ok(e.term)).then(|| varint_len(e.term).saturating_add(varint_len(e.incarnation)))
}

/// The body check behind a follower's recognised heartbeat (`Node::recognise_heartbeat`): the
/// `sent_at` of `b` when [`read`] decodes it to a heartbeat with this `cluster`, sender `from`,
/// `term` and `incarnation`. It *is* [`read`] (the same canonical varints, lengths and ending),
/// followed by a comparison, so the two cannot disagree on what a valid heartbeat is; a heartbeat
/// body allocates nothing. Native builds only, like the recognised path itself (see
/// `Node::accept`), and the tests on every target.
#[cfg(any(test, not(target_family = "wasm")))]
#[inline]
pub(super) fn known_heartbeat(b: &[u8], cluster: &[u8], from: &[u8], term: u64, incarnation: u64) -> Option<u64> {
    let e = read(b, super::MIN_VERSION).ok()?;
    if e.cluster != cluster || e.from != from || e.term != term || e.incarnation != incarnation {
        return None;
    }
    match e.message {
        Message::Heartbeat { sent_at } => Some(sent_at),
        _ => None,
    }
}

/// A cursor over the body; every read either consumes a whole canonical value or fails.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, DropReason> {
        let (&b, rest) = self.rest.split_first().ok_or(DropReason::Malformed)?;
        self.rest = rest;
        Ok(b)
    }

    /// A canonical LEB128 `u64`: at most ten bytes, the tenth holding only bit 63, and no
    /// over-long form (a final byte of zero after the first).
    ///
    /// The common one-byte value is read inline (every length, kind and most terms); longer ones
    /// in [`Reader::long_varint`]. Not forced in the WebAssembly builds, which favour size: there
    /// the copies at every call site cost more bytes than the call they save is worth.
    #[cfg_attr(not(target_family = "wasm"), inline(always))]
    fn varint(&mut self) -> Result<u64, DropReason> {
        if let Some((&b, rest)) = self.rest.split_first() {
            if b < 0x80 {
                self.rest = rest;
                return Ok(u64::from(b));
            }
        }
        self.long_varint()
    }

    /// A varint of two bytes or more: byte by byte over the slice, the cursor moved once at the end.
    #[cfg_attr(not(target_family = "wasm"), inline(never))]
    fn long_varint(&mut self) -> Result<u64, DropReason> {
        let mut value = 0u64;
        for (i, &b) in self.rest.iter().enumerate().take(10) {
            let shift = 7 * i as u32;
            if shift == 63 && b > 1 {
                return Err(DropReason::Malformed);
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                if b == 0 {
                    // Over-long: `i > 0` here (a one-byte value returned above).
                    return Err(DropReason::Malformed);
                }
                self.rest = self.rest.get(i + 1..).unwrap_or_default();
                return Ok(value);
            }
        }
        Err(DropReason::Malformed)
    }

    fn bytes(&mut self) -> Result<&'a [u8], DropReason> {
        let len = usize::try_from(self.varint()?).map_err(|_| DropReason::Malformed)?;
        let (b, rest) = self.rest.split_at_checked(len).ok_or(DropReason::Malformed)?;
        self.rest = rest;
        Ok(b)
    }

    /// A proclaimed value: UTF-8 text of at most `MAX_VALUE_LEN` bytes.
    fn value(&mut self) -> Result<alloc::string::String, DropReason> {
        let b = self.bytes()?;
        if b.len() > super::MAX_VALUE_LEN {
            return Err(DropReason::Malformed);
        }
        core::str::from_utf8(b).map(alloc::string::String::from).map_err(|_| DropReason::Malformed)
    }

    fn bool(&mut self) -> Result<bool, DropReason> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DropReason::Malformed),
        }
    }

    /// A message of the kinds envelope `version` has (a newer kind in an older envelope is
    /// malformed, as a node of that version would find it).
    fn message(&mut self, version: u8) -> Result<Message, DropReason> {
        Ok(match self.varint()? {
            PRE_VOTE => Message::PreVote,
            PRE_VOTE_REPLY => Message::PreVoteReply { granted: self.bool()? },
            VOTE => Message::Vote { transfer: self.bool()? },
            VOTE_REPLY => Message::VoteReply { granted: self.bool()? },
            HEARTBEAT => Message::Heartbeat { sent_at: self.varint()? },
            HEARTBEAT_ACK => Message::HeartbeatAck { echo: self.varint()? },
            TIMEOUT_NOW => Message::TimeoutNow,
            APP => Message::App { seq: self.varint()?, payload: self.bytes()?.to_vec() },
            HELLO if version >= 4 => Message::Hello {
                version: u8::try_from(self.varint()?).map_err(|_| DropReason::Malformed)?,
                reply: self.bool()?,
            },
            DEATH_NOTICE if version >= 4 => Message::DeathNotice,
            VALUE if version >= 4 => Message::Value { seq: self.varint()?, value: self.value()? },
            VALUE_ACK if version >= 4 => Message::ValueAck { seq: self.varint()? },
            PRIORITY if version >= 4 => Message::Priority {
                priority: u32::try_from(self.varint()?).map_err(|_| DropReason::Malformed)?,
                never_lead: self.bool()?,
                reply: self.bool()?,
            },
            OBSERVE if version >= 4 => Message::Observe { seq: self.varint()? },
            _ => return Err(DropReason::Malformed),
        })
    }
}

/// Decodes a whole body of an envelope of `version`, borrowing the ids from it. Allocates only
/// for an `App` payload.
pub(super) fn read(body: &[u8], version: u8) -> Result<RawEnvelope<'_>, DropReason> {
    let mut r = Reader { rest: body };
    let cluster = r.bytes()?;
    let from = r.bytes()?;
    let term = r.varint()?;
    if term > MAX_TERM {
        return Err(DropReason::Malformed);
    }
    let incarnation = r.varint()?;
    let message = r.message(version)?;
    if !r.rest.is_empty() {
        return Err(DropReason::Malformed);
    }
    Ok(RawEnvelope { version, cluster, from, term, incarnation, message })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn varint(bytes: &[u8]) -> Result<u64, DropReason> {
        let mut r = Reader { rest: bytes };
        let v = r.varint()?;
        if r.rest.is_empty() {
            Ok(v)
        } else {
            Err(DropReason::Malformed)
        }
    }

    #[test]
    fn varints_round_trip_at_every_length_boundary() {
        let mut values = vec![0, 1, u64::MAX, MAX_TERM];
        for bits in 1..64 {
            values.extend([(1u64 << bits) - 1, 1u64 << bits, (1u64 << bits) + 1]);
        }
        for v in values {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "length of {v}");
            assert_eq!(varint(&out), Ok(v), "{v} from {out:02x?}");
        }
    }

    #[test]
    fn only_the_canonical_varint_is_accepted() {
        assert_eq!(varint(&[0x00]), Ok(0));
        assert_eq!(varint(&[0x80, 0x00]), Err(DropReason::Malformed), "0 in two bytes");
        assert_eq!(varint(&[0x81, 0x00]), Err(DropReason::Malformed), "1 in two bytes");
        assert_eq!(varint(&[0xff, 0x80, 0x00]), Err(DropReason::Malformed), "127 in three bytes");
        let max = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(varint(&max), Ok(u64::MAX));
        let mut past = max;
        past[9] = 0x02;
        assert_eq!(varint(&past), Err(DropReason::Malformed), "2^64 and above");
        past[9] = 0x81;
        assert_eq!(varint(&[&past[..], &[0x00]].concat()), Err(DropReason::Malformed), "eleven bytes");
        assert_eq!(varint(&[0x80]), Err(DropReason::Malformed), "continuation with nothing after");
        assert_eq!(varint(&[]), Err(DropReason::Malformed));
    }

    #[test]
    fn bools_are_one_byte_zero_or_one() {
        for (b, want) in
            [(0u8, Ok(false)), (1, Ok(true)), (2, Err(DropReason::Malformed)), (0xff, Err(DropReason::Malformed))]
        {
            assert_eq!(Reader { rest: &[b] }.bool(), want);
        }
    }

    #[test]
    fn a_length_past_the_end_is_malformed() {
        assert_eq!(Reader { rest: &[0x03, b'a', b'b'] }.bytes(), Err(DropReason::Malformed));
        let huge = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Reader { rest: &huge }.bytes(), Err(DropReason::Malformed));
    }
}
