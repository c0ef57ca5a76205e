//! The codec alone, fast (no node): any bytes, as is and behind a valid header, either fail to
//! decode or decode to an envelope whose encoding is exactly those bytes; and an envelope built
//! from the input encodes (when its term is in range) to bytes that decode back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tenure::wire::{decode, encode, Auth, Envelope, Message, MAGIC, MAX_TERM, VERSION};

const KEY: &[u8] = b"fuzz key";

fn round_trip(data: &[u8]) {
    for key in [None, Some(Auth { key: KEY, receiver: "n1" })] {
        if let Ok(env) = decode(data, key) {
            assert!(env.term <= MAX_TERM, "a decoded term is within the bound");
            assert_eq!(encode(&env, key).as_deref(), Ok(data), "decoding accepts only the canonical encoding");
        }
    }
}

/// Reads little-endian integers and slices off the front of the input.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (a, b) = self.0.split_at(n.min(self.0.len()));
        self.0 = b;
        a
    }
    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        let t = self.take(8);
        b[..t.len()].copy_from_slice(t);
        u64::from_le_bytes(b)
    }
    fn string(&mut self) -> String {
        let n = usize::from(self.take(1).first().copied().unwrap_or(0) % 16);
        String::from_utf8_lossy(self.take(n)).into_owned()
    }
}

fn build(data: &[u8]) {
    let mut i = Input(data);
    let kind = i.take(1).first().copied().unwrap_or(0);
    let (cluster, from, term, incarnation) = (i.string(), i.string(), i.u64(), i.u64());
    let v = i.u64();
    let message = match kind % 10 {
        0 => Message::PreVote,
        1 => Message::PreVoteReply { granted: v % 2 == 1 },
        2 => Message::Vote { transfer: v % 2 == 1 },
        3 => Message::VoteReply { granted: v % 2 == 1 },
        4 => Message::Heartbeat { sent_at: v },
        5 => Message::HeartbeatAck { echo: v },
        6 => Message::TimeoutNow,
        7 => Message::App { seq: v, payload: i.0.to_vec() },
        8 => Message::Hello { version: v as u8, reply: v & 0x100 != 0 },
        _ => Message::DeathNotice,
    };
    let env = Envelope { cluster, from, term, incarnation, message };
    for key in [None, Some(Auth { key: KEY, receiver: "n1" })] {
        match encode(&env, key) {
            Ok(bytes) => assert_eq!(decode(&bytes, key).as_ref(), Ok(&env), "what encodes, decodes"),
            Err(r) => assert!(term > MAX_TERM, "only a term past the bound is refused here, got {r:?}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    round_trip(data);
    let flags = data.first().map_or(0, |b| b & 1);
    let mut framed = [&MAGIC[..], &[VERSION, flags]].concat();
    framed.extend_from_slice(data.get(1..).unwrap_or_default());
    round_trip(&framed);
    build(data);
});
