//! The hot path as a raw Node-API callback: `handleMessageInto(node, now, peer, bytes, buf)`.
//!
//! A `#[napi]` method pays for napi-rs's per-call machinery (a native-borrow scope with its
//! allocation, hash map and thread-local bookkeeping, which made up about 44 % of an empty method
//! call in a profile) besides Node-API's own. This one function, on every datagram, is registered
//! by hand instead: it reads its arguments with one Node-API call each, unwraps the `NativeNode`
//! after checking the object's type tag (exactly the check napi-rs makes, so a wrong object is a
//! `TypeError`, never a type confusion), and calls the same Rust as a method would. No JavaScript
//! runs during the call (no argument conversion can call back into JS), so the `&mut NativeNode`
//! cannot alias another borrow; panics are caught and become exceptions.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use napi::bindgen_prelude::{panic_to_error, validate_type_tag, Env, JsObjectValue, Object, TypeTag, Unknown};
use napi::{sys, Error, JsError, Result, Status};
use napi_derive::napi;

use crate::conv::type_error;
use crate::NativeNode;

/// Adds `handleMessageInto` to the addon's exports.
#[napi(module_exports)]
pub fn hot_exports(mut exports: Object, env: Env) -> Result<()> {
    let name = "handleMessageInto";
    let mut f = ptr::null_mut();
    // SAFETY: `env` is the module's environment; the callback has the Node-API signature.
    let status = unsafe {
        sys::napi_create_function(
            env.raw(),
            name.as_ptr().cast(),
            name.len() as isize,
            Some(handle_message_into),
            ptr::null_mut(),
            &mut f,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(Error::new(Status::GenericFailure, "could not create handleMessageInto".to_string()));
    }
    // SAFETY: `f` is the function just created in this environment.
    exports.set_named_property(name, unsafe { Unknown::from_raw_unchecked(env.raw(), f) })
}

unsafe extern "C" fn handle_message_into(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
    // SAFETY: called by Node-API with a live environment and callback info.
    match catch_unwind(AssertUnwindSafe(|| unsafe { call(env, info) })) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            // Conversion errors have thrown already (`conv`); anything else is thrown here.
            if e.status != Status::PendingException {
                unsafe { JsError::from(e).throw_into(env) };
            }
            ptr::null_mut()
        }
        Err(panic) => {
            unsafe { JsError::from(panic_to_error(panic)).throw_into(env) };
            ptr::null_mut()
        }
    }
}

unsafe fn call(raw: sys::napi_env, info: sys::napi_callback_info) -> Result<sys::napi_value> {
    let env = Env::from_raw(raw);
    let mut argc = 5;
    // Missing arguments come back as `undefined`.
    let mut argv = [ptr::null_mut(); 5];
    let status =
        unsafe { sys::napi_get_cb_info(raw, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) };
    if status != sys::Status::napi_ok {
        return Err(Error::new(Status::GenericFailure, "handleMessageInto: could not read its arguments".to_string()));
    }
    let mut wrapped = ptr::null_mut();
    if unsafe { sys::napi_unwrap(raw, argv[0], &mut wrapped) } != sys::Status::napi_ok || wrapped.is_null() {
        return Err(type_error(&env, "node must be a NativeNode".into()));
    }
    if unsafe { validate_type_tag(raw, argv[0], &<NativeNode as TypeTag>::type_tag(), "NativeNode") }.is_err() {
        return Err(type_error(&env, "node must be a NativeNode".into()));
    }
    // SAFETY: the type tag proves that `wrapped` is the `NativeNode` napi-rs wrapped into this object,
    // alive while the object is (it is an argument of this call); no other borrow of it is live
    // because no JavaScript runs during a `NativeNode` call.
    let node = unsafe { &mut *wrapped.cast::<NativeNode>() };
    let mut peer = 0u32;
    if unsafe { sys::napi_get_value_uint32(raw, argv[2], &mut peer) } != sys::Status::napi_ok {
        return Err(type_error(&env, "peer must be a number (an internPeer index)".into()));
    }
    let arg = |i: usize| unsafe { Unknown::from_raw_unchecked(raw, argv[i]) };
    let n = node.handle_message_into(&env, &arg(1), peer, &arg(3), &arg(4))?;
    let mut out = ptr::null_mut();
    if unsafe { sys::napi_create_int32(raw, n, &mut out) } != sys::Status::napi_ok {
        return Err(Error::new(Status::GenericFailure, "handleMessageInto: could not return".to_string()));
    }
    Ok(out)
}
