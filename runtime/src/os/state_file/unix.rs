//! Unix: a file is its device and inode; a rename is durable once its directory is fsynced.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

pub(crate) fn same_file(held: &File, path: &Path) -> io::Result<bool> {
    let held = held.metadata()?;
    let now = std::fs::metadata(path)?;
    Ok(now.dev() == held.dev() && now.ino() == held.ino())
}

pub(crate) fn replace(tmp: &Path, real: &Path, dir: &Path) -> io::Result<()> {
    std::fs::rename(tmp, real)?;
    File::open(dir).and_then(|d| d.sync_all())
}
