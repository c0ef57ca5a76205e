//! A small simulated cluster driven by fuzzer-chosen faults (see `tenure_sim::fuzz::cluster`),
//! with every invariant (S1–S4) asserted after every step.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(v) = tenure_sim::fuzz::cluster(data) {
        panic!("{v}");
    }
});
