//! `docs/wire.md` is the one human definition of the wire format, so it is checked here: every
//! hex example in it decodes to the meaning written under it and re-encodes to the same bytes,
//! or is dropped with the reason written under it; and its drop table names every reason.

use tenure::wire::{decode, encode, Auth, Envelope, Message};
use tenure::DropReason;

const DOC: &str = include_str!("../../docs/wire.md");

/// One example: the bytes of a ```text block and the `→ ...` line under it.
struct Example {
    line: usize,
    bytes: Vec<u8>,
    meaning: String,
}

/// The leading two-digit hex tokens of a line (the rest of the line is commentary).
fn hex_prefix(line: &str) -> Vec<u8> {
    line.split_whitespace().map_while(|t| if t.len() == 2 { u8::from_str_radix(t, 16).ok() } else { None }).collect()
}

fn examples() -> Vec<Example> {
    let lines: Vec<&str> = DOC.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "```text" {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut bytes = Vec::new();
        i += 1;
        while i < lines.len() && lines[i].trim() != "```" {
            bytes.extend(hex_prefix(lines[i]));
            i += 1;
        }
        i += 1;
        if !bytes.starts_with(b"TN") {
            continue; // a layout sketch, not an example
        }
        let meaning = lines[i..].iter().map(|l| l.trim()).find(|l| !l.is_empty()).unwrap_or_default();
        assert!(meaning.starts_with("→ "), "docs/wire.md:{start}: the example has no `→ meaning` line after it");
        out.push(Example { line: start, bytes, meaning: meaning.trim_start_matches("→ ").to_string() });
    }
    out
}

/// The text between the first pair of backticks after `prefix`.
fn quoted<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = text.strip_prefix(prefix)?.strip_prefix('`')?;
    rest.split_once('`').map(|(q, _)| q)
}

#[test]
fn every_example_in_docs_wire_md_decodes_to_its_documented_meaning() {
    let all = examples();
    let (mut kinds, mut keyed, mut reasons) = (std::collections::BTreeSet::new(), 0, std::collections::BTreeSet::new());
    for ex in &all {
        let at = format!("docs/wire.md:{}", ex.line);
        if let Some(reason) = quoted(&ex.meaning, "dropped: ") {
            match decode(&ex.bytes, None) {
                Err(r) => assert_eq!(r.as_str(), reason, "{at}: dropped for another reason"),
                Ok(e) => panic!("{at}: documented as dropped ({reason}) but decodes to {e:?}"),
            }
            reasons.insert(reason.to_string());
            continue;
        }
        let (auth, want) = match ex.meaning.strip_prefix("with key `\"") {
            Some(rest) => {
                let (key, rest) = rest.split_once("\"`").expect("with key `\"...\"`, to `id`: `meaning`");
                let receiver = quoted(rest, ", to ").expect("a keyed example names its receiver: , to `id`");
                let rest = rest.split_once(&format!("`{receiver}`")).expect("the receiver").1;
                keyed += 1;
                (
                    Some(Auth { key: key.as_bytes(), receiver }),
                    quoted(rest, ": ").expect("a quoted meaning after the key"),
                )
            }
            None => (None, quoted(&ex.meaning, "").expect("→ `meaning`")),
        };
        let env = decode(&ex.bytes, auth).unwrap_or_else(|r| panic!("{at}: dropped as {}", r.as_str()));
        assert_eq!(format!("{env:?}"), want, "{at}: decodes to something else");
        assert_eq!(encode(&env, auth).expect("re-encodes"), ex.bytes, "{at}: not the canonical encoding");
        kinds.insert(env.message.kind());
    }
    assert_eq!(kinds.len(), 14, "one example per message kind: {kinds:?}");
    assert!(keyed >= 1, "an authenticated example");
    assert!(reasons.contains("malformed") && reasons.contains("unknown_version"), "refused examples: {reasons:?}");
}

#[test]
fn the_varint_examples_in_the_text_are_what_the_encoder_writes() {
    // A heartbeat ends with its kind (04) and then `sent_at`: the bytes after a zero `sent_at`'s
    // prefix are the varint.
    let hb = |sent_at| {
        let e = Envelope {
            cluster: "c".into(),
            from: "a".into(),
            term: 1,
            incarnation: 0,
            message: Message::Heartbeat { sent_at },
        };
        encode(&e, None).expect("encodes")
    };
    let prefix = hb(0).len() - 1;
    let flat = DOC.split_whitespace().collect::<Vec<_>>().join(" ");
    for (text, v) in [("0", 0), ("127", 127), ("300", 300), ("1000", 1000), ("2^64 − 1", u64::MAX)] {
        let bytes = hb(v);
        let hex: Vec<String> = bytes[prefix..].iter().map(|b| format!("{b:02x}")).collect();
        let phrase = format!("`{text}` is `{}`", hex.join(" "));
        assert!(flat.contains(&phrase), "docs/wire.md should say {phrase}");
    }
}

#[test]
fn the_drop_table_names_every_reason() {
    for r in DropReason::ALL {
        let row = format!("| `{}` |", r.as_str());
        assert!(DOC.contains(&row), "docs/wire.md has no drop table row for {}", r.as_str());
    }
}
