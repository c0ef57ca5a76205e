//! Arbitrary bytes: decoding never panics, whatever decodes re-encodes to exactly the same bytes
//! (the decoder is canonical: one encoding per envelope), and a node handed the bytes drops them
//! with a counted reason or accepts them. Each input is tried as is and behind a valid `TN`
//! header of the current version (so that the body decoder is explored without the fuzzer having
//! to guess the magic first).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tenure::wire::{decode, encode, Auth, MAGIC, VERSION};
use tenure::{Config, Node};

const KEY: &[u8] = b"fuzz key";

fn check(data: &[u8]) {
    for key in [None, Some(Auth { key: KEY, receiver: "n1" })] {
        if let Ok(env) = decode(data, key) {
            // The decoder accepts only the canonical encoding (no over-long varints, bools 0/1,
            // no trailing bytes), so re-encoding gives back the input byte for byte.
            let again = encode(&env, key).expect("a decoded envelope re-encodes");
            assert_eq!(again, data, "a decoded message is its own canonical encoding");
        }
    }
    for key in [None, Some(KEY.to_vec())] {
        let mut config = Config::new("n1", "fuzz").bootstrap(["n2", "n3"]);
        config.key = key;
        let mut node = Node::new(config, 1, None, 0).expect("config");
        let from = match data.get(5) {
            Some(b) if b % 2 == 0 => "n2",
            _ => "n3",
        };
        let r = node.handle_message(5, from, data);
        let dropped: u64 = node.inspect().dropped_by_reason.iter().map(|(_, c)| c).sum();
        assert_eq!(dropped, u64::from(r.is_err()), "exactly the dropped message is counted");
        while node.poll_output().is_some() {}
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let flags = data.first().map_or(0, |b| b & 1);
    let mut framed = [&MAGIC[..], &[VERSION]].concat();
    framed.push(flags);
    framed.extend_from_slice(data.get(1..).unwrap_or_default());
    check(&framed);
});
