//! Conversions at the JavaScript boundary, and the errors they throw.
//!
//! Every exported function takes its arguments as `Unknown` and converts them here, so that a
//! wrong type is always a `TypeError` (code `ERR_INVALID_ARG_TYPE`) and an out-of-range number a
//! `RangeError` (code `ERR_OUT_OF_RANGE`), never napi's generic conversion error. Whole numbers
//! cross as `number` when they are safe integers (below 2^53) and as `bigint` otherwise, in both
//! directions: nothing is ever silently rounded or truncated.

use napi::bindgen_prelude::{BigInt, Env, JsObjectValue, JsValue, Object, ToNapiValue, Unknown};
use napi::{sys, Error, JsError, JsRangeError, JsTypeError, Result, Status, ValueType};

/// Largest integer a JavaScript `number` holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE: u64 = (1 << 53) - 1;

/// Throws a `TypeError` and returns the error that tells napi an exception is pending.
pub fn type_error(env: &Env, message: String) -> Error {
    unsafe { JsTypeError::from(Error::new("ERR_INVALID_ARG_TYPE", message)).throw_into(env.raw()) };
    Error::from_status(Status::PendingException)
}

/// Throws a `RangeError`.
pub fn range_error(env: &Env, message: String) -> Error {
    unsafe { JsRangeError::from(Error::new("ERR_OUT_OF_RANGE", message)).throw_into(env.raw()) };
    Error::from_status(Status::PendingException)
}

/// Throws an `Error` whose `code` is one of the core's stable codes (the JS layer turns it into
/// the matching `TenureError` subclass).
pub fn coded_error(env: &Env, code: &str, message: String) -> Error {
    unsafe { JsError::from(Error::new(code, message)).throw_into(env.raw()) };
    Error::from_status(Status::PendingException)
}

fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "boolean",
        ValueType::Number => "number",
        ValueType::String => "string",
        ValueType::Symbol => "symbol",
        ValueType::Object => "object",
        ValueType::Function => "function",
        ValueType::External => "external",
        ValueType::BigInt => "bigint",
        _ => "unknown",
    }
}

/// Whether the value is `undefined` or `null`.
pub fn is_nullish(v: &Unknown) -> Result<bool> {
    Ok(matches!(v.get_type()?, ValueType::Undefined | ValueType::Null))
}

/// A whole number in `0..=max`, given as a safe-integer `number` or a `bigint`.
pub fn uint(env: &Env, v: &Unknown, what: &str, max: u64) -> Result<u64> {
    match v.get_type()? {
        ValueType::Number => {
            let f: f64 = unsafe { v.cast()? };
            if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= MAX_SAFE as f64 && (f as u64) <= max {
                Ok(f as u64)
            } else {
                Err(range_error(env, format!("{what} must be a whole number from 0 to {}, got {f}", max.min(MAX_SAFE))))
            }
        }
        ValueType::BigInt => {
            let b: BigInt = unsafe { v.cast()? };
            let (negative, value, lossless) = b.get_u64();
            if negative || !lossless || value > max {
                Err(range_error(env, format!("{what} must be a bigint from 0n to {max}n")))
            } else {
                Ok(value)
            }
        }
        t => Err(type_error(env, format!("{what} must be a number or a bigint, got {}", type_name(t)))),
    }
}

/// A `u64` (milliseconds, terms, seeds).
pub fn u64_arg(env: &Env, v: &Unknown, what: &str) -> Result<u64> {
    // The common case in one Node-API call: a `number` that is a safe whole number.
    let mut f = 0.0;
    // SAFETY: a plain out-parameter; anything but a `number` is an error status (handled below).
    if unsafe { sys::napi_get_value_double(env.raw(), v.raw(), &mut f) } == sys::Status::napi_ok
        && f >= 0.0
        && f <= MAX_SAFE as f64
        && f.fract() == 0.0
    {
        return Ok(f as u64);
    }
    uint(env, v, what, u64::MAX)
}

/// A `u64`, or `None` for `undefined`/`null`.
pub fn opt_u64(env: &Env, v: Option<&Unknown>, what: &str) -> Result<Option<u64>> {
    match v {
        Some(v) if !is_nullish(v)? => Ok(Some(u64_arg(env, v, what)?)),
        _ => Ok(None),
    }
}

/// A string.
pub fn string(env: &Env, v: &Unknown, what: &str) -> Result<String> {
    match v.get_type()? {
        ValueType::String => unsafe { v.cast() },
        t => Err(type_error(env, format!("{what} must be a string, got {}", type_name(t)))),
    }
}

/// A string, or `None` for `undefined`/`null`.
pub fn opt_string(env: &Env, v: Option<&Unknown>, what: &str) -> Result<Option<String>> {
    match v {
        Some(v) if !is_nullish(v)? => Ok(Some(string(env, v, what)?)),
        _ => Ok(None),
    }
}

/// A boolean.
pub fn boolean(env: &Env, v: &Unknown, what: &str) -> Result<bool> {
    match v.get_type()? {
        ValueType::Boolean => unsafe { v.cast() },
        t => Err(type_error(env, format!("{what} must be a boolean, got {}", type_name(t)))),
    }
}

/// The memory of a `Uint8Array` (a `Buffer` is one) in one Node-API call (on the hot path: no
/// `typeof`/`isTypedArray` round trips first); `None` for any other value.
fn u8_array(env: &Env, v: &Unknown) -> Option<(*mut u8, usize)> {
    let mut kind = 0;
    let mut len = 0;
    let mut data = std::ptr::null_mut();
    let mut buffer = std::ptr::null_mut();
    let mut offset = 0;
    // SAFETY: plain out-parameters; Node-API reports anything but a typed array as an error status.
    let status = unsafe {
        sys::napi_get_typedarray_info(env.raw(), v.raw(), &mut kind, &mut len, &mut data, &mut buffer, &mut offset)
    };
    (status == sys::Status::napi_ok && kind == sys::TypedarrayType::uint8_array).then_some((data.cast(), len))
}

fn not_bytes(env: &Env, v: &Unknown, what: &str) -> Error {
    let t = v.get_type().map_or("unknown", type_name);
    type_error(env, format!("{what} must be a Uint8Array or Buffer, got {t}"))
}

/// The bytes of a `Uint8Array` (a `Buffer` is one), borrowed for the duration of the call.
pub fn bytes<'a>(env: &Env, v: &Unknown<'a>, what: &str) -> Result<&'a [u8]> {
    match u8_array(env, v) {
        // SAFETY: the array's memory stays valid while its value is alive, that is for this call
        // (the addon calls no JavaScript that could detach it meanwhile).
        Some((data, len)) if len > 0 => Ok(unsafe { std::slice::from_raw_parts(data, len) }),
        Some(_) => Ok(&[]),
        None => Err(not_bytes(env, v, what)),
    }
}

/// The bytes of a `Uint8Array` to write into, borrowed for the duration of the call.
pub fn bytes_mut<'a>(env: &Env, v: &Unknown<'a>, what: &str) -> Result<&'a mut [u8]> {
    match u8_array(env, v) {
        // SAFETY: as in `bytes`; the caller hands the array over for this call only.
        Some((data, len)) if len > 0 => Ok(unsafe { std::slice::from_raw_parts_mut(data, len) }),
        Some(_) => Ok(&mut []),
        None => Err(not_bytes(env, v, what)),
    }
}

/// Bytes given as a `Uint8Array`/`Buffer`, or a string taken as its UTF-8 bytes (keys).
pub fn bytes_or_string(env: &Env, v: &Unknown, what: &str) -> Result<Vec<u8>> {
    if v.get_type()? == ValueType::String {
        let s: String = unsafe { v.cast()? };
        return Ok(s.into_bytes());
    }
    match bytes(env, v, what) {
        Ok(b) => Ok(b.to_vec()),
        Err(e) => Err(e),
    }
}

/// A plain object (not an array, not a function).
pub fn object<'a>(env: &Env, v: &Unknown<'a>, what: &str) -> Result<Object<'a>> {
    let t = v.get_type()?;
    if t == ValueType::Object && !v.is_array()? {
        return Ok(Object::from_raw(env.raw(), v.raw()));
    }
    let name = if t == ValueType::Object { "array" } else { type_name(t) };
    Err(type_error(env, format!("{what} must be an object, got {name}")))
}

/// Rejects properties outside `allowed` (catches typos such as `electionTimeout`).
pub fn only_keys(env: &Env, obj: &Object, what: &str, allowed: &[&str]) -> Result<()> {
    let names = obj.get_property_names()?;
    let len = names.get_array_length()?;
    for i in 0..len {
        let key: Unknown = names.get_element(i)?;
        if key.get_type()? != ValueType::String {
            continue;
        }
        let key: String = unsafe { key.cast()? };
        if !allowed.contains(&key.as_str()) {
            return Err(type_error(
                env,
                format!("{what} has an unknown property {key:?}; expected some of: {}", allowed.join(", ")),
            ));
        }
    }
    Ok(())
}

/// A property, `None` when absent or `undefined`.
pub fn prop<'a>(obj: &Object<'a>, name: &str) -> Result<Option<Unknown<'a>>> {
    obj.get::<Unknown>(name)
}

/// An array of strings.
pub fn strings(env: &Env, v: &Unknown, what: &str) -> Result<Vec<String>> {
    if v.get_type()? != ValueType::Object || !v.is_array()? {
        let t = v.get_type()?;
        return Err(type_error(env, format!("{what} must be an array of strings, got {}", type_name(t))));
    }
    let arr = Object::from_raw(env.raw(), v.raw());
    let len = arr.get_array_length()?;
    let mut out = Vec::with_capacity(len as usize);
    for i in 0..len {
        let item: Unknown = arr.get_element(i)?;
        out.push(string(env, &item, &format!("{what}[{i}]"))?);
    }
    Ok(out)
}

/// A `u64` on its way out: a `number` when it is a safe integer, a `bigint` otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct U64(pub u64);

impl ToNapiValue for U64 {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        if val.0 <= MAX_SAFE {
            unsafe { f64::to_napi_value(env, val.0 as f64) }
        } else {
            unsafe { BigInt::to_napi_value(env, BigInt::from(val.0)) }
        }
    }
}

/// `Option<U64>` as `number | bigint | null`.
pub fn opt(v: Option<u64>) -> Option<U64> {
    v.map(U64)
}
