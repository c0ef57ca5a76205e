//! Arbitrary bytes: decoding never panics, whatever decodes re-encodes to the same bytes, and a
//! node handed the bytes drops them with a counted reason or accepts them.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tenure::wire::{decode, encode};
use tenure::{Config, Node};

fuzz_target!(|data: &[u8]| {
    for key in [None, Some(&b"fuzz key"[..])] {
        if let Ok(env) = decode(data, key) {
            let again = encode(&env, key).expect("a decoded envelope re-encodes");
            assert_eq!(again, data, "decode/encode is not the identity");
        }
    }
    let mut node = Node::new(Config::new("n1", "fuzz").bootstrap(["n2", "n3"]), 1, None, 0).expect("config");
    let before: u64 = node.inspect().dropped_by_reason.values().sum();
    let from = match data.first() {
        Some(b) if b % 2 == 0 => "n2",
        _ => "n3",
    };
    let r = node.handle_message(5, from, data);
    let after: u64 = node.inspect().dropped_by_reason.values().sum();
    assert_eq!(after - before, u64::from(r.is_err()));
    while node.poll_output().is_some() {}
});
