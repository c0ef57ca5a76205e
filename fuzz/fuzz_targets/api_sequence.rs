//! An arbitrary sequence of API calls on one node (see `tenure_sim::fuzz::api_sequence`): no
//! panic, and the node's local invariants hold after every call.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = tenure_sim::fuzz::api_sequence(data) {
        panic!("{e}");
    }
});
