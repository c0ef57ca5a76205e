//! Parsing tests of the command line.
use super::*;

#[test]
fn parses_the_shared_command_line() {
    let cmd = parse_args([
        "run",
        "--id",
        "127.0.0.1:7001",
        "--peer",
        "127.0.0.1:7002",
        "--peer=127.0.0.1:7003",
        "--cluster",
        "c",
        "--bind",
        "0.0.0.0",
        "--election-timeout-min",
        "200",
        "--state-file",
        "/tmp/s",
    ])
    .unwrap();
    let Command::Run(o) = cmd else { panic!("not run") };
    assert_eq!(o.peers, vec!["127.0.0.1:7002", "127.0.0.1:7003"]);
    let c = o.runtime_config();
    assert_eq!(c.node.validate().unwrap().election_timeout_max, 400);
    assert_eq!(c.bind.as_deref(), Some("0.0.0.0"));
    assert_eq!(parse_args(["--help"]), Ok(Command::Help));
    assert_eq!(parse_args(["--version"]), Ok(Command::Version));
    assert_eq!(parse_args(["run", "--id", "a:1", "--version"]), Ok(Command::Version));
    // No peer: refused by the runtime's own check (as in every binding), unless one node is a
    // cluster or peers may come to it.
    let Ok(Command::Run(alone)) = parse_args(["run", "--id", "a:1", "--cluster", "c"]) else { panic!() };
    let e = alone.runtime_config().validate().unwrap_err();
    assert_eq!((e.code(), e.kind()), ("invalid_option", "config"));
    assert!(e.to_string().contains("no peer was given"), "{e}");
    let Ok(Command::Run(alone)) = parse_args(["run", "--id", "a:1", "--cluster", "c", "--min-cluster-size", "1"])
    else {
        panic!()
    };
    assert!(alone.runtime_config().validate().is_ok());
    // An argument that was not UTF-8 (decoded lossily by every host) is a usage error.
    let e = parse_args(["run", "--cluster", "bad\u{FFFD}"]).unwrap_err();
    assert!(e.contains("argument 3") && e.contains("not valid UTF-8"), "{e}");
    assert!(parse_args(["run", "--ghost-ttl", "x"]).unwrap_err().contains("--ghost-ttl"));
    assert!(parse_args(["run", "--bogus", "1"]).unwrap_err().contains("--bogus"));
    assert!(parse_args(["run", "--id", "a:1", "--id", "b:1"]).unwrap_err().contains("more than once"));
    assert!(parse_args(["run", "--id=a:1", "--cluster", "c", "--cluster=d"]).unwrap_err().contains("--cluster"));
    assert!(parse_args(["run", "stray"]).unwrap_err().contains("stray"));
    assert!(parse_args(["run", "--id"]).unwrap_err().contains("needs a value"));
    assert!(parse_args(["start"]).unwrap_err().contains("start"));
    let Command::Run(o) = parse_args([
        "run",
        "--id",
        "a:1",
        "--peer",
        "b:1",
        "--cluster",
        "c",
        "--admit-unknown-peers",
        "--max-peers",
        "4",
    ])
    .unwrap() else {
        panic!("not run")
    };
    let c = o.runtime_config();
    assert!(c.node.admit_unknown_peers);
    assert_eq!(c.node.max_peers, 4);
    assert!(parse_args(["run", "--admit-unknown-peers", "--admit-unknown-peers"])
        .unwrap_err()
        .contains("more than once"));
    assert!(parse_args(["run", "--admit-unknown-peers=yes"]).unwrap_err().contains("takes no value"));
}

// Where the command cannot be supervised, `-- CMD` is refused (the next test).
#[cfg(unix)]
#[test]
fn everything_after_dashes_is_the_leader_only_command() {
    let base = ["run", "--id", "a:1", "--peer", "b:1", "--cluster", "c"];
    let Command::Run(o) =
        parse_args(base.iter().copied().chain(["--kill-grace", "250", "--", "sh", "-c", "--peer x", "--"])).unwrap()
    else {
        panic!("not run")
    };
    assert_eq!(o.command, vec!["sh", "-c", "--peer x", "--"]);
    assert_eq!((o.kill_grace, o.peers.len()), (Some(250), 1));
    assert!(parse_args(base.iter().copied().chain(["--"])).unwrap_err().contains("needs a command"));
    assert!(parse_args(base.iter().copied().chain(["--kill-grace", "1"])).unwrap_err().contains("-- CMD"));
    assert!(parse_args(base.iter().copied().chain(["--kill-grace", "x", "--", "true"]))
        .unwrap_err()
        .contains("--kill-grace"));
    let Command::Run(o) = parse_args(base).unwrap() else { panic!("not run") };
    assert!(o.command.is_empty());
}

#[test]
fn failure_detection_is_on_unless_switched_off() {
    let base = ["run", "--id", "a:1", "--peer", "b:1", "--cluster", "c"];
    let Command::Run(o) = parse_args(base).unwrap() else { panic!("not run") };
    assert!(o.runtime_config().failure_detection);
    let Command::Run(o) = parse_args(base.iter().copied().chain(["--no-failure-detection"])).unwrap() else {
        panic!("not run")
    };
    assert!(!o.runtime_config().failure_detection);
    let twice = base.iter().copied().chain(["--no-failure-detection", "--no-failure-detection"]);
    assert!(parse_args(twice).unwrap_err().contains("more than once"));
}

#[test]
fn lease_duration_reaches_the_core() {
    let args = |lease: &'static str| {
        let Command::Run(o) =
            parse_args(["run", "--id", "a:1", "--peer", "b:1", "--cluster", "c", "--lease-duration", lease]).unwrap()
        else {
            panic!("not run")
        };
        o.runtime_config().node.validate()
    };
    assert_eq!(args("120").unwrap().lease_duration, 120);
    // Longer than election_timeout_min (150 by default): the core's typed error names it.
    let err = args("151").unwrap_err();
    assert_eq!(err.code(), "lease_out_of_range");
    assert!(err.to_string().contains("151"), "{err}");
    assert!(parse_args(["run", "--lease-duration", "x"]).unwrap_err().contains("--lease-duration"));
    assert!(parse_args(["run", "--lease-duration=1", "--lease-duration", "2"]).unwrap_err().contains("more than once"));
}

#[test]
fn the_help_quotes_the_cores_defaults() {
    for (flag, default) in [
        ("--min-cluster-size N ", u64::from(tenure::DEFAULT_MIN_CLUSTER_SIZE)),
        ("--election-timeout-min MS ", tenure::DEFAULT_ELECTION_TIMEOUT_MIN),
        ("--election-timeout-max MS ", tenure::DEFAULT_ELECTION_TIMEOUT_MAX),
        ("--heartbeat-interval MS ", tenure::DEFAULT_HEARTBEAT_INTERVAL),
        ("--ghost-ttl MS ", tenure::DEFAULT_GHOST_TTL),
        ("--max-peers N ", u64::from(tenure::DEFAULT_MAX_PEERS)),
        ("--kill-grace MS ", crate::DEFAULT_KILL_GRACE),
    ] {
        let line = USAGE.lines().find(|l| l.trim_start().starts_with(flag)).unwrap_or_else(|| panic!("{flag}"));
        assert!(line.contains(&format!("default {default}")), "{line}");
    }
}

#[test]
fn event_lines_have_one_schema() {
    let l = event_line(5, "a", &RuntimeEvent::Leader { term: 4, value: None });
    assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"leader","term":4,"value":null}"#);
    let l = event_line(5, "a", &RuntimeEvent::Leader { term: 4, value: Some("http://a".into()) });
    assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"leader","term":4,"value":"http://a"}"#);
    let l = event_line(5, "a", &RuntimeEvent::Follower { term: 4, leader: None, value: None });
    assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"follower","term":4,"leader":null,"value":null}"#);
    let l =
        event_line(5, "a", &RuntimeEvent::Follower { term: 4, leader: Some("b\"".into()), value: Some("v\"".into()) });
    assert_eq!(l, r#"{"ts_ms":5,"id":"a","event":"follower","term":4,"leader":"b\"","value":"v\""}"#);
    let l = event_line(1, "a", &RuntimeEvent::Message { from: "b".into(), payload: vec![0, 255] });
    assert_eq!(l, r#"{"ts_ms":1,"id":"a","event":"message","from":"b","payload_hex":"00ff"}"#);
    let l = event_line(1, "a", &RuntimeEvent::Fatal { error: RuntimeError::Stopped });
    assert_eq!(l, r#"{"ts_ms":1,"id":"a","event":"fatal","code":"stopped","message":"the runtime has stopped"}"#);
    for e in [
        RuntimeEvent::Started { id: "a".into(), bound_addr: "127.0.0.1:1".parse().unwrap(), term: 0 },
        RuntimeEvent::Warning { code: "x".into(), message: "y\n".into() },
        RuntimeEvent::Stopped { term: 2 },
        RuntimeEvent::PeerJoined { peer: "p".into() },
        RuntimeEvent::PeerLeft { peer: "p".into() },
    ] {
        let v: serde_json::Value = serde_json::from_str(&event_line(1, "a", &e)).unwrap();
        assert_eq!(v["id"], "a");
    }
    assert_eq!(key_from_file(b"secret\n"), b"secret".to_vec());
}

#[test]
fn control_lines() {
    assert_eq!(parse_control(" transfer 127.0.0.1:7002\n"), Ok(Some(Control::Transfer(Some("127.0.0.1:7002".into())))));
    assert_eq!(parse_control("transfer"), Ok(Some(Control::Transfer(None))));
    assert_eq!(parse_control("inspect"), Ok(Some(Control::Inspect)));
    assert_eq!(parse_control("broadcast hi there"), Ok(Some(Control::Broadcast(b"hi there".to_vec()))));
    assert_eq!(parse_control(""), Ok(None));
    assert!(parse_control("transfer a b").is_err());
    assert!(parse_control("reboot now").is_err());
    // The control lines python/README.md lists.
    assert_eq!(parse_control("join 127.0.0.1:7004"), Ok(Some(Control::Join("127.0.0.1:7004".into()))));
    assert_eq!(parse_control("leave 127.0.0.1:7004"), Ok(Some(Control::Leave("127.0.0.1:7004".into()))));
    assert!(parse_control("join").is_err());
    assert!(parse_control("leave a b").is_err());
}

/// What an OS cannot honour is refused with the option named, and only when asked for: a command
/// where it cannot be supervised, `--death-notice` where no watchdog can prove this process's
/// death; the default death notice is merely off there (with the reason, for the warning).
#[test]
fn an_option_the_os_cannot_honour_is_refused_by_name() {
    let run = |args: &[&str]| {
        let base = ["run", "--id", "127.0.0.1:7001", "--cluster", "c"];
        let Ok(Command::Run(o)) = parse_args(base.iter().chain(args)) else { panic!("{args:?}") };
        o
    };
    let (no_command, no_proof) = (Err("not supported here"), Err("no proof of death here"));
    // Set after parsing, which refuses a command on an OS that cannot supervise it.
    let mut with_command = run(&[]);
    with_command.command = vec!["sleep".into(), "9".into()];
    assert_eq!(
        parse_args(["run", "--id", "127.0.0.1:7001", "--cluster", "c", "--", "sleep", "9"]).is_ok(),
        crate::os::process::LEADER_COMMAND.is_ok()
    );
    let e = check_platform(&with_command, no_command, Ok(())).unwrap_err();
    assert!(e.contains("-- CMD") && e.contains("not supported here"), "{e}");
    assert_eq!(check_platform(&with_command, Ok(()), no_proof), Ok(()), "the default notice is not refused");
    let mut asked = run(&["--http", "127.0.0.1:0"]);
    asked.death_notice = true;
    let e = check_platform(&asked, Ok(()), no_proof).unwrap_err();
    assert!(e.contains("--death-notice") && e.contains("no proof of death here"), "{e}");
    assert_eq!(check_platform(&asked, Ok(()), Ok(())), Ok(()));
    assert_eq!(check_platform(&run(&[]), no_command, no_proof), Ok(()), "nothing asked, nothing refused");
    // This host's own answer: Linux and Windows honour both, macOS has no death proof yet.
    if cfg!(any(target_os = "linux", windows)) {
        assert!(with_command.death_notices() && with_command.death_notice_unavailable().is_none());
    } else {
        assert!(!with_command.death_notices() && with_command.death_notice_unavailable().is_some());
    }
    assert_eq!(run(&["--no-death-notice"]).death_notice_unavailable(), None, "not wanted: no warning");
}
