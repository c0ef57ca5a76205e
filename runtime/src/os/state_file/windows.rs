//! Windows: a file is its volume serial number and file index (the `same-file` crate reads them
//! with `GetFileInformationByHandle`); a directory cannot be opened as a file to be flushed, so
//! the rename is made durable by `MoveFileExW`'s `MOVEFILE_WRITE_THROUGH`, which returns only
//! once the move is on disk.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{MoveFileExW, MOVEFILE_REPLACE_EXISTING, MOVEFILE_WRITE_THROUGH};

pub(crate) fn same_file(held: &File, path: &Path) -> io::Result<bool> {
    let held = same_file::Handle::from_file(held.try_clone()?)?;
    let now = same_file::Handle::from_path(path)?;
    Ok(held == now)
}

pub(crate) fn replace(tmp: &Path, real: &Path, _dir: &Path) -> io::Result<()> {
    let (from, to) = (wide(tmp.as_os_str()), wide(real.as_os_str()));
    // SAFETY: both arguments are NUL-terminated UTF-16 strings that live across the call.
    #[allow(unsafe_code)]
    let ok = unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `s` as a NUL-terminated UTF-16 string.
fn wide(s: &OsStr) -> Vec<u16> {
    s.encode_wide().chain(std::iter::once(0)).collect()
}
