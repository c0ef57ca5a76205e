//! Errors: the core's errors as `tenure.errors` exceptions (typed, carrying the stable code).

#[allow(unused_imports)]
use super::*;

/// Builds `tenure.errors.<class_name>(*args)` as a raisable error. If even that fails (the
/// package is broken), the failure itself is raised, so nothing is ever swallowed.
pub(crate) fn raise<'py, A>(py: Python<'py>, class_name: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    match errors_module(py).and_then(|m| m.getattr(class_name)).and_then(|c| c.call1(args)) {
        Ok(value) => PyErr::from_value(value),
        Err(e) => e,
    }
}

/// The exception `tenure.errors.from_code` picks for a stable code (the generated table decides
/// the class; nothing here repeats it).
fn coded(py: Python<'_>, message: String, code: &str) -> PyErr {
    match errors_module(py).and_then(|m| m.getattr("from_code")).and_then(|f| f.call1((message, code))) {
        Ok(value) => PyErr::from_value(value),
        Err(e) => e,
    }
}

pub(crate) fn node_error(py: Python<'_>, e: Error) -> PyErr {
    coded(py, e.to_string(), e.code())
}

pub(crate) fn config_error(py: Python<'_>, e: ConfigError) -> PyErr {
    coded(py, e.to_string(), e.code())
}

pub(crate) fn drop_reason<'py>(py: Python<'py>, r: DropReason) -> PyResult<Bound<'py, PyAny>> {
    cls_drop_reason(py)?.call1((r.as_str(),))
}

pub(crate) fn decode_error(py: Python<'_>, r: DropReason) -> PyErr {
    match drop_reason(py, r) {
        Ok(reason) => raise(py, "DecodeError", (format!("message dropped: {r}"), reason)),
        Err(e) => e,
    }
}
