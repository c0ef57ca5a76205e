//! Properties over random input (proptest): no panic on any bytes, decode/encode round trips,
//! random API call sequences keep a node's local invariants, and small clusters driven by random
//! faults keep S1–S4 and converge (the same drivers as the cargo-fuzz targets in `fuzz/`).

use proptest::prelude::*;
use tenure::wire::{decode, encode, Auth, Envelope, Message};
use tenure::{Config, Node};

fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        Just(Message::PreVote),
        any::<bool>().prop_map(|granted| Message::PreVoteReply { granted }),
        any::<bool>().prop_map(|transfer| Message::Vote { transfer }),
        any::<bool>().prop_map(|granted| Message::VoteReply { granted }),
        any::<u64>().prop_map(|sent_at| Message::Heartbeat { sent_at }),
        any::<u64>().prop_map(|echo| Message::HeartbeatAck { echo }),
        Just(Message::TimeoutNow),
        (any::<u8>(), any::<bool>()).prop_map(|(version, reply)| Message::Hello { version, reply }),
        Just(Message::DeathNotice),
        (any::<u64>(), proptest::collection::vec(any::<u8>(), 0..64))
            .prop_map(|(seq, payload)| Message::App { seq, payload }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn decoding_any_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300), keyed in any::<bool>()) {
        let key = keyed.then_some(Auth { key: b"k", receiver: "n1" });
        if let Ok(env) = decode(&bytes, key) {
            // The decoder accepts only canonical encodings: re-encoding gives back the input.
            let again = encode(&env, key).unwrap();
            prop_assert_eq!(&again, &bytes);
        }
        let mut node = Node::new(Config::new("n1", "c").bootstrap(["n2", "n3"]), 1, None, 0).unwrap();
        let _ = node.handle_message(1, "n2", &bytes);
        while node.poll_output().is_some() {}
    }

    #[test]
    fn tenure_prefixed_garbage_never_panics(body in proptest::collection::vec(any::<u8>(), 0..120)) {
        let mut bytes = [tenure::wire::MAGIC[0], tenure::wire::MAGIC[1], tenure::wire::VERSION, 0].to_vec();
        bytes.extend_from_slice(&body);
        let mut node = Node::new(Config::new("n1", "c").bootstrap(["n2", "n3"]), 1, None, 0).unwrap();
        let _ = node.handle_message(1, "n2", &bytes);
        while node.poll_output().is_some() {}
    }

    #[test]
    fn every_envelope_round_trips(cluster in "[a-z]{1,12}", from in "\\PC{1,20}", term in 0..=tenure::MAX_TERM, incarnation in any::<u64>(), m in message(), keyed in any::<bool>()) {
        let key = keyed.then_some(Auth { key: b"secret", receiver: "n2" });
        let env = Envelope { cluster, from, term, incarnation, message: m };
        let bytes = encode(&env, key).unwrap();
        prop_assert_eq!(decode(&bytes, key), Ok(env));
    }

    #[test]
    fn random_api_sequences_keep_local_invariants(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Err(e) = tenure_sim::fuzz::api_sequence(&bytes) {
            return Err(TestCaseError::fail(e));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_fault_schedules_keep_the_invariants(bytes in proptest::collection::vec(any::<u8>(), 10..120)) {
        if let Err(e) = tenure_sim::fuzz::cluster(&bytes) {
            return Err(TestCaseError::fail(e));
        }
    }
}
