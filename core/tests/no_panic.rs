//! Decoding and handling any byte string never panics, and anything dropped is counted.

use proptest::prelude::*;
use tenure::{Config, Node};

proptest! {
    #[test]
    fn any_bytes_are_handled_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), keyed in any::<bool>()) {
        let mut c = Config::new("n1", "test").bootstrap(["n2", "n3"]);
        if keyed { c = c.key(b"k".to_vec()); }
        let mut n = Node::new(c, 1, None, 0).unwrap();
        let before: u64 = n.inspect().dropped_by_reason.iter().map(|(_, c)| c).sum();
        let r = n.handle_message(1, "n2", &bytes);
        let after: u64 = n.inspect().dropped_by_reason.iter().map(|(_, c)| c).sum();
        prop_assert_eq!(r.is_err(), after == before + 1);
        let _ = tenure::wire::decode(&bytes, None);
    }

    #[test]
    fn valid_prefix_with_garbage_body_is_dropped(tail in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut bytes = [tenure::wire::MAGIC[0], tenure::wire::MAGIC[1], tenure::wire::VERSION, 0].to_vec();
        bytes.extend(tail);
        let mut n = Node::new(Config::new("n1", "test").bootstrap(["n2", "n3"]), 1, None, 0).unwrap();
        let _ = n.handle_message(1, "n2", &bytes);
        while n.poll_output().is_some() {}
    }
}
