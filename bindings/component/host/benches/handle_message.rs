//! Per-call cost of the component from the Rust host (wasmtime, cranelift): a follower handling
//! a heartbeat (one `send` callback for the ack, one `set-wakeup` for the re-armed election
//! timer), a broadcast (two `send`s), a bare query, and the native core doing the same heartbeat
//! work for comparison. `cargo bench -p tenure-component-host`.

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use tenure::wire::{encode, Envelope, Message};
use tenure_component_host::{
    default_node_config, Callbacks, ComponentNode, ConfirmAnswer, DurableState, LeaderRefusal, Loader, NodeConfig,
};

/// Counts callbacks and does nothing else, so the numbers are the crossing and the core's work.
#[derive(Default)]
struct Count {
    calls: u64,
    wakeup: Option<u64>,
}

impl Callbacks for Count {
    fn send(&mut self, _: &str, bytes: Vec<u8>) {
        self.calls += 1;
        black_box(bytes);
    }
    fn set_wakeup(&mut self, deadline: Option<u64>) {
        self.calls += 1;
        self.wakeup = deadline;
    }
    fn persist(&mut self, _: &DurableState) -> Result<(), String> {
        self.calls += 1;
        Ok(())
    }
    fn became_leader(&mut self, _: u64) -> Result<(), LeaderRefusal> {
        self.calls += 1;
        Ok(())
    }
    fn became_follower(&mut self, _: u64, _: Option<&str>) {
        self.calls += 1;
    }
    fn confirm_leader(&mut self, _: u64) -> ConfirmAnswer {
        self.calls += 1;
        ConfirmAnswer::Grant
    }
    fn peer_joined(&mut self, _: &str) {
        self.calls += 1;
    }
    fn peer_left(&mut self, _: &str) {
        self.calls += 1;
    }
    fn message(&mut self, _: &str, _: Vec<u8>) {
        self.calls += 1;
    }
}

fn config(id: &str) -> NodeConfig {
    default_node_config(id, "bench", &["a".into(), "b".into(), "c".into()], 1)
}

fn heartbeat(sent_at: u64) -> Vec<u8> {
    let env = Envelope {
        cluster: "bench".into(),
        from: "b".into(),
        term: 1,
        incarnation: 0,
        message: Message::Heartbeat { sent_at },
    };
    encode(&env, None).expect("encodable")
}

fn bench(c: &mut Criterion) {
    let loader = Loader::<Count>::built().expect("component");
    let hb = heartbeat(10);

    // A follower of "b" in term 1.
    let mut follower = ComponentNode::new(&loader, Count::default(), &config("a"), 0).unwrap().unwrap();
    follower.handle_message(1, "b", &hb).unwrap().unwrap();
    let mut now = 1;
    c.bench_function("component: handle_message(heartbeat) + send + set-wakeup", |b| {
        b.iter(|| {
            now += 1;
            follower.handle_message(now, "b", black_box(&hb)).unwrap().unwrap();
        })
    });
    assert!(follower.callbacks().calls > 2);

    let mut native = tenure::Node::new(
        tenure::Config::new("a", "bench").bootstrap(["a", "b", "c"]).confirm_leader(false),
        1,
        None,
        0,
    )
    .unwrap();
    let mut now = 1;
    c.bench_function("native core: handle_message(heartbeat) + drain", |b| {
        b.iter(|| {
            now += 1;
            native.handle_message(now, "b", black_box(&hb)).unwrap();
            while let Some(o) = native.poll_output() {
                black_box(o);
            }
            black_box(native.poll_timeout());
        })
    });

    c.bench_function("component: term() (a bare call, no callbacks)", |b| {
        b.iter(|| black_box(follower.term().unwrap()))
    });

    let payload = [7u8; 32];
    let mut now = 1_000_000;
    c.bench_function("component: broadcast(32 bytes) + 2 sends", |b| {
        b.iter(|| {
            now += 1;
            follower.broadcast(now, black_box(&payload)).unwrap().unwrap();
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
