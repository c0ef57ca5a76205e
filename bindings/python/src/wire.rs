//! `tenure.wire`: encoding and decoding of envelopes.

#[allow(unused_imports)]
use super::*;

pub(crate) fn message_to_py<'py>(py: Python<'py>, m: Message) -> PyResult<Bound<'py, PyAny>> {
    match m {
        Message::PreVote => cls_pre_vote(py)?.call0(),
        Message::PreVoteReply { granted } => cls_pre_vote_reply(py)?.call1((granted,)),
        Message::Vote { transfer } => cls_vote(py)?.call1((transfer,)),
        Message::VoteReply { granted } => cls_vote_reply(py)?.call1((granted,)),
        Message::Heartbeat { sent_at } => cls_heartbeat(py)?.call1((sent_at,)),
        Message::HeartbeatAck { echo } => cls_heartbeat_ack(py)?.call1((echo,)),
        Message::TimeoutNow => cls_timeout_now(py)?.call0(),
        Message::App { seq, payload } => cls_app(py)?.call1((PyBytes::new(py, &payload), seq)),
        Message::Hello { version, reply } => cls_hello(py)?.call1((version, reply)),
        Message::DeathNotice => cls_death_notice(py)?.call0(),
        Message::Value { seq, value } => cls_value(py)?.call1((seq, value)),
        Message::ValueAck { seq } => cls_value_ack(py)?.call1((seq,)),
        Message::Priority { priority, never_lead, reply } => cls_priority(py)?.call1((priority, never_lead, reply)),
        Message::Observe { seq } => cls_observe(py)?.call1((seq,)),
    }
}

pub(crate) fn message_from(m: &Bound<'_, PyAny>) -> PyResult<Message> {
    let py = m.py();
    const W: &str = "message";
    Ok(if is(m, cls_pre_vote(py))? {
        Message::PreVote
    } else if is(m, cls_pre_vote_reply(py))? {
        Message::PreVoteReply { granted: attr(m, W, "granted")? }
    } else if is(m, cls_vote(py))? {
        Message::Vote { transfer: attr(m, W, "transfer")? }
    } else if is(m, cls_vote_reply(py))? {
        Message::VoteReply { granted: attr(m, W, "granted")? }
    } else if is(m, cls_heartbeat(py))? {
        Message::Heartbeat { sent_at: attr(m, W, "sent_at")? }
    } else if is(m, cls_heartbeat_ack(py))? {
        Message::HeartbeatAck { echo: attr(m, W, "echo")? }
    } else if is(m, cls_timeout_now(py))? {
        Message::TimeoutNow
    } else if is(m, cls_app(py))? {
        Message::App { seq: attr(m, W, "seq")?, payload: bytes_arg(&m.getattr("payload")?, "message.payload")? }
    } else if is(m, cls_hello(py))? {
        Message::Hello { version: attr(m, W, "version")?, reply: attr(m, W, "reply")? }
    } else if is(m, cls_death_notice(py))? {
        Message::DeathNotice
    } else if is(m, cls_value(py))? {
        Message::Value { seq: attr(m, W, "seq")?, value: attr(m, W, "value")? }
    } else if is(m, cls_value_ack(py))? {
        Message::ValueAck { seq: attr(m, W, "seq")? }
    } else if is(m, cls_priority(py))? {
        Message::Priority {
            priority: attr(m, W, "priority")?,
            never_lead: attr(m, W, "never_lead")?,
            reply: attr(m, W, "reply")?,
        }
    } else if is(m, cls_observe(py))? {
        Message::Observe { seq: attr(m, W, "seq")? }
    } else {
        return Err(PyTypeError::new_err(format!("expected a tenure.wire message, got {}", type_name(m))));
    })
}

/// The key and receiver arguments as the core's `Auth`: a key needs the receiver's id (the tag
/// covers it).
fn auth_args(key: Option<&Bound<'_, PyAny>>, receiver: Option<String>) -> PyResult<Option<(Vec<u8>, String)>> {
    let key = match key {
        Some(k) => key_arg(k, "key")?,
        None => None,
    };
    match (key, receiver) {
        (Some(k), Some(r)) => Ok(Some((k, r))),
        (Some(_), None) => Err(PyTypeError::new_err(
            "a key needs receiver= (the id of the node the message is addressed to: the tag covers it)",
        )),
        (None, _) => Ok(None),
    }
}

fn auth(a: &Option<(Vec<u8>, String)>) -> Option<tenure::wire::Auth<'_>> {
    a.as_ref().map(|(key, receiver)| tenure::wire::Auth { key, receiver })
}

/// Encodes a `tenure.wire.Envelope` (tagged with HMAC-SHA256 for `receiver` when `key` is given).
#[pyfunction]
#[pyo3(signature = (envelope, key=None, receiver=None))]
pub(crate) fn encode<'py>(
    envelope: &Bound<'py, PyAny>,
    key: Option<&Bound<'py, PyAny>>,
    receiver: Option<String>,
) -> PyResult<Bound<'py, PyBytes>> {
    let py = envelope.py();
    if !is(envelope, cls_envelope(py))? {
        return Err(PyTypeError::new_err(format!("expected a tenure.wire.Envelope, got {}", type_name(envelope))));
    }
    const W: &str = "Envelope";
    let env = Envelope {
        cluster: attr(envelope, W, "cluster")?,
        from: attr(envelope, W, "sender")?,
        term: attr(envelope, W, "term")?,
        incarnation: attr(envelope, W, "incarnation")?,
        message: message_from(&envelope.getattr("message")?)?,
    };
    let a = auth_args(key, receiver)?;
    match tenure::wire::encode(&env, auth(&a)) {
        Ok(bytes) => Ok(PyBytes::new(py, &bytes)),
        Err(DropReason::Oversized) => Err(raise(
            py,
            "PayloadTooLargeError",
            (format!("the encoded message would exceed {} bytes", tenure::MAX_MESSAGE_SIZE), "payload_too_large"),
        )),
        // A term above MAX_TERM: every receiver would drop the bytes as malformed.
        Err(r) => Err(match drop_reason(py, r) {
            Ok(reason) => raise(
                py,
                "DecodeError",
                (format!("term {} is above MAX_TERM ({}): {}", env.term, tenure::MAX_TERM, r.text()), reason),
            ),
            Err(e) => e,
        }),
    }
}

/// Decodes one message into a `tenure.wire.Envelope`; raises `DecodeError` on bad input.
#[pyfunction]
#[pyo3(signature = (data, key=None, receiver=None))]
pub(crate) fn decode<'py>(
    data: &Bound<'py, PyAny>,
    key: Option<&Bound<'py, PyAny>>,
    receiver: Option<String>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = data.py();
    let data = bytes_arg(data, "data")?;
    let a = auth_args(key, receiver)?;
    let env = tenure::wire::decode(&data, auth(&a)).map_err(|r| decode_error(py, r))?;
    let message = message_to_py(py, env.message)?;
    cls_envelope(py)?.call1((env.cluster, env.from, env.term, message, env.incarnation))
}
