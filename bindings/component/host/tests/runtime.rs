//! The component as the shared runtime's engine, beside the native core, in one cluster over
//! loopback UDP: the component is a drop-in for `tenure::Node`.

use std::net::UdpSocket;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use tenure_component_host::{ComponentEngine, Loader, Queue};
use tenure_runtime::{native, spawn, Handle, RuntimeConfig, RuntimeEvent};

fn ids(n: usize) -> Vec<String> {
    let sockets: Vec<UdpSocket> = (0..n).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
    sockets.iter().map(|s| format!("127.0.0.1:{}", s.local_addr().unwrap().port())).collect()
}

fn forward(id: &str, tx: &Sender<(String, RuntimeEvent)>) -> impl FnMut(RuntimeEvent) + Send + 'static {
    let (id, tx) = (id.to_string(), tx.clone());
    move |e| {
        let _ = tx.send((id.clone(), e));
    }
}

#[track_caller]
fn wait_for(
    rx: &Receiver<(String, RuntimeEvent)>,
    pred: impl Fn(&str, &RuntimeEvent) -> bool,
) -> (String, RuntimeEvent) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((id, e)) if pred(&id, &e) => return (id, e),
            Ok(_) => {}
            Err(_) => panic!("timed out"),
        }
    }
}

#[test]
fn component_and_native_engines_form_one_cluster_under_the_runtime() {
    let loader: Loader<Queue> = Loader::built().expect("the component compiles");
    let all = ids(3);
    let (tx, rx) = channel();
    let config = |id: &str| {
        let node = tenure::Config::new(id, "mixed").bootstrap(all.iter().cloned());
        RuntimeConfig::new(node).log(false)
    };
    // Two nodes inside the component, one native.
    let mut handles: Vec<Handle> = all[..2]
        .iter()
        .map(|id| spawn(config(id), ComponentEngine::factory(loader.clone()), forward(id, &tx)).unwrap())
        .collect();
    handles.push(spawn(config(&all[2]), native, forward(&all[2], &tx)).unwrap());

    let (first, e) = wait_for(&rx, |_, e| matches!(e, RuntimeEvent::Leader { .. }));
    let RuntimeEvent::Leader { term, .. } = e else { unreachable!() };
    let leader = handles.iter().find(|h| h.id() == first).unwrap();
    let state = leader.inspect().unwrap();
    assert_eq!((state.state.as_str(), state.view_size), ("leader", 3));

    // Hand leadership to each engine kind in turn: component → native and native → component.
    let native_id = all[2].clone();
    let target = if first == native_id { all[0].clone() } else { native_id.clone() };
    leader.transfer(Some(&target)).unwrap();
    let (second, _) =
        wait_for(&rx, |id, e| id == target && matches!(e, RuntimeEvent::Leader { term: t, .. } if *t > term));
    handles.iter().find(|h| h.id() == second).unwrap().broadcast(b"across engines").unwrap();
    wait_for(&rx, |id, e| {
        id != second && matches!(e, RuntimeEvent::Message { payload, .. } if payload == b"across engines")
    });

    // A graceful stop of the leader hands over to another engine.
    let h = handles.iter().find(|h| h.id() == second).unwrap().clone();
    h.stop();
    wait_for(&rx, |id, e| id != second && matches!(e, RuntimeEvent::Leader { .. }));
    for h in &handles {
        h.stop();
    }
}
