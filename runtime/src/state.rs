//! The state file: one format and one writer for every host.
//!
//! Format: one JSON object, `{"term": 4, "voted_for": "127.0.0.1:7002"}` (`null`: no vote), with a
//! final newline. The old one-line format (`4 127.0.0.1:7002`, `-` for no vote) written by the
//! earlier Python, Node.js and wasmtime runtimes is read too; the runtime rewrites it as JSON at
//! start.
//!
//! The path is resolved first: a symlink (or a chain of them, or a symlinked directory) names the
//! real file, and the real file is the one locked, read and replaced. Writing through the link
//! would replace the link by a regular file (the durable term would leave the volume it was meant
//! to live on), and locking by the given path would let a second process, given another path to
//! the same file, start and vote a second time in a term.
//!
//! Writing: `REAL.tmp` is written and fsynced, renamed over `REAL`, then the directory is
//! fsynced (on Windows the rename is written through instead: `crate::os::state_file`), so a
//! crash leaves either the old or the new pair, never a torn one. `REAL.lock` is locked
//! exclusively (`flock`; `LockFileEx` on Windows) while a [`StateFile`] is open: a second process
//! opening the same file by any path fails with [`RuntimeError::StateLocked`]. (The lock is on
//! its own file because the rename replaces `REAL`'s inode at every write.) The lock file is removed when the
//! [`StateFile`] is dropped (a stop, or a start that failed after opening it), so nothing is left
//! behind; whoever locks it checks afterwards that the path still names the inode it locked, so a
//! removal racing with a second opener cannot give two processes the lock.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tenure::DurableState;

use crate::RuntimeError;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Json<'a> {
    term: u64,
    #[serde(borrow)]
    voted_for: Option<std::borrow::Cow<'a, str>>,
}

/// The file's text for `state`.
pub fn encode(state: &DurableState) -> String {
    let json = Json { term: state.term, voted_for: state.voted_for.as_deref().map(Into::into) };
    let mut s = serde_json::to_string(&json).unwrap_or_default();
    s.push('\n');
    s
}

/// Parses the JSON format or the old one-line format; `Err` says what was found instead.
pub fn decode(text: &str) -> Result<DurableState, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('{') {
        let j: Json<'_> = serde_json::from_str(trimmed).map_err(|e| format!("invalid JSON state: {e}"))?;
        return Ok(DurableState { term: j.term, voted_for: j.voted_for.map(|v| v.into_owned()) });
    }
    // The old format: `term voted_for`, `-` for no vote.
    let mut parts = trimmed.split_whitespace();
    let legacy = (|| {
        let term = parts.next()?.parse().ok()?;
        let voted = parts.next()?;
        if parts.next().is_some() {
            return None;
        }
        Some(DurableState { term, voted_for: (voted != "-").then(|| voted.to_string()) })
    })();
    legacy.ok_or_else(|| {
        let shown: String = trimmed.chars().take(60).collect();
        format!("expected {{\"term\": N, \"voted_for\": ID or null}}, found \"{shown}\"")
    })
}

/// An open, locked state file.
#[derive(Debug)]
pub struct StateFile {
    /// The path as given (errors name it).
    path: PathBuf,
    /// The real file the path resolves to (written, and locked through `lock_path`).
    real: PathBuf,
    tmp: PathBuf,
    dir: PathBuf,
    lock_path: PathBuf,
    _lock: File,
}

impl Drop for StateFile {
    fn drop(&mut self) {
        // Removed while still locked: an opener that had the old inode open re-checks the path
        // after locking and retries (see `lock`).
        let _ = std::fs::remove_file(&self.lock_path);
    }
}

/// Symlinks followed at most (the kernel's own limit for one lookup).
const MAX_LINKS: usize = 40;

/// The real file `path` names: every symlink of the file itself followed (the target may not
/// exist yet), and the directory made canonical. `Ok(None)`: the directory does not exist.
fn real_path(path: &Path) -> Result<Option<PathBuf>, std::io::Error> {
    let mut p = path.to_path_buf();
    let mut links = 0;
    while std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
        links += 1;
        if links > MAX_LINKS {
            return Err(std::io::Error::other(format!("more than {MAX_LINKS} symlinks (a loop?)")));
        }
        let target = std::fs::read_link(&p)?;
        p = match p.parent() {
            Some(d) if target.is_relative() => d.join(target),
            _ => target,
        };
    }
    let Some(name) = p.file_name().map(ToOwned::to_owned) else {
        // `..`, `/` and the like: a directory, refused by the caller.
        return Ok(Some(p));
    };
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    match std::fs::canonicalize(&dir) {
        Ok(dir) if dir.is_dir() => Ok(Some(dir.join(name))),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Opens and locks `lock_path` exclusively; `Ok(None)` when another process holds it. Retries
/// when the path stopped naming the locked inode (its holder removed it on the way out).
fn lock(lock_path: &Path) -> Result<Option<File>, std::io::Error> {
    loop {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(lock_path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        match crate::os::state_file::same_file(&file, lock_path) {
            Ok(true) => return Ok(Some(file)),
            Ok(false) => continue,
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        }
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

impl StateFile {
    /// Opens `path`: checks its directory, takes the lock, reads the stored pair (`None` when the
    /// file does not exist yet), and writes it back (the pair read, or term 0 and no vote), so
    /// that an unwritable path fails here and an old-format file becomes JSON.
    pub fn open(path: impl Into<PathBuf>) -> Result<(StateFile, Option<DurableState>), RuntimeError> {
        let path: PathBuf = path.into();
        let unwritable = |e: std::io::Error, path: &Path| RuntimeError::StateUnwritable {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let real = match real_path(&path) {
            Ok(Some(real)) => real,
            Ok(None) => return Err(RuntimeError::StateDirMissing { path }),
            Err(e) => return Err(unwritable(e, &path)),
        };
        let dir = match real.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if real.is_dir() || real.file_name().is_none() {
            return Err(RuntimeError::StateUnwritable { path, message: "it is a directory".into() });
        }
        let lock_path = with_suffix(&real, ".lock");
        let lock = match lock(&lock_path) {
            Ok(Some(lock)) => lock,
            Ok(None) => return Err(RuntimeError::StateLocked { path }),
            Err(e) => return Err(unwritable(e, &path)),
        };
        // From here on a failure drops `file`, which removes the lock file it created.
        let mut file = StateFile { tmp: with_suffix(&real, ".tmp"), path, real, dir, lock_path, _lock: lock };
        let restored = match std::fs::read(&file.real) {
            Ok(bytes) => {
                let text =
                    String::from_utf8(bytes).map_err(|_| RuntimeError::StateNotUtf8 { path: file.path.clone() })?;
                Some(decode(&text).map_err(|message| RuntimeError::StateCorrupt { path: file.path.clone(), message })?)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(RuntimeError::StateRead { path: file.path.clone(), message: e.to_string() }),
        };
        file.store(restored.as_ref().unwrap_or(&DurableState::default()))?;
        Ok((file, restored))
    }

    /// The state file's path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The real file written (the path with every symlink resolved).
    pub fn real_path(&self) -> &Path {
        &self.real
    }

    /// Makes `state` durable (temp file, fsync, rename, fsync of the directory).
    pub fn store(&mut self, state: &DurableState) -> Result<(), RuntimeError> {
        let fail =
            |e: std::io::Error| RuntimeError::StateUnwritable { path: self.path.clone(), message: e.to_string() };
        let mut f = File::create(&self.tmp).map_err(fail)?;
        f.write_all(encode(state).as_bytes()).map_err(fail)?;
        f.sync_all().map_err(fail)?;
        drop(f);
        crate::os::state_file::replace(&self.tmp, &self.real, &self.dir).map_err(fail)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn json_and_old_format_decode() {
        assert_eq!(
            decode("{\"term\": 4, \"voted_for\": \"127.0.0.1:7002\"}\n"),
            Ok(DurableState { term: 4, voted_for: Some("127.0.0.1:7002".into()) })
        );
        assert_eq!(decode("{\"term\":0,\"voted_for\":null}"), Ok(DurableState { term: 0, voted_for: None }));
        assert_eq!(decode("7 -\n"), Ok(DurableState { term: 7, voted_for: None }));
        assert_eq!(decode("7 b:1\n"), Ok(DurableState { term: 7, voted_for: Some("b:1".into()) }));
        assert!(decode("garbage").unwrap_err().contains("garbage"));
        assert!(decode("{\"term\": -1}").is_err());
        assert!(decode("").is_err());
        assert_eq!(encode(&DurableState { term: 3, voted_for: None }), "{\"term\":3,\"voted_for\":null}\n");
    }

    #[test]
    fn open_locks_writes_and_types_its_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("node.json");
        let (mut f, restored) = StateFile::open(&path).unwrap();
        assert_eq!(restored, None);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"term\":0,\"voted_for\":null}\n");
        assert_eq!(StateFile::open(&path).unwrap_err().code(), "state_locked");
        f.store(&DurableState { term: 9, voted_for: Some("x:1".into()) }).unwrap();
        drop(f);
        let (_f, restored) = StateFile::open(&path).unwrap();
        assert_eq!(restored, Some(DurableState { term: 9, voted_for: Some("x:1".into()) }));

        let missing = dir.path().join("nope").join("s.json");
        assert_eq!(StateFile::open(&missing).unwrap_err().code(), "state_dir_missing");
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(StateFile::open(&bad).unwrap_err().code(), "state_not_utf8");
        std::fs::write(&bad, "hello world again").unwrap();
        assert_eq!(StateFile::open(&bad).unwrap_err().code(), "state_corrupt");
        let old = dir.path().join("old");
        std::fs::write(&old, "12 127.0.0.1:7003\n").unwrap();
        let (_f, restored) = StateFile::open(&old).unwrap();
        assert_eq!(restored, Some(DurableState { term: 12, voted_for: Some("127.0.0.1:7003".into()) }));
        assert!(std::fs::read_to_string(&old).unwrap().starts_with('{'), "migrated to JSON");
    }

    /// A symlinked state file stays a symlink (the real file is written), and the lock is the
    /// real file's: a second opener through another path to it is refused.
    #[cfg(unix)]
    #[test]
    fn a_symlink_is_followed_and_the_real_file_is_locked() {
        let dir = tempfile::tempdir().unwrap();
        let volume = dir.path().join("volume");
        std::fs::create_dir(&volume).unwrap();
        let real = volume.join("node.json");
        let link = dir.path().join("state.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        // A dangling link (its target does not exist yet) is followed too.
        let (mut f, restored) = StateFile::open(&link).unwrap();
        assert_eq!(restored, None);
        f.store(&DurableState { term: 5, voted_for: Some("a:1".into()) }).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
        assert_eq!(decode(&std::fs::read_to_string(&real).unwrap()).unwrap().term, 5);
        assert_eq!(f.real_path(), std::fs::canonicalize(&real).unwrap());
        // Another path to the same file: through the real path, a second link, a relative link
        // and a symlinked directory.
        let link2 = dir.path().join("other.json");
        std::os::unix::fs::symlink("volume/node.json", &link2).unwrap();
        let dirlink = dir.path().join("vol2");
        std::os::unix::fs::symlink(&volume, &dirlink).unwrap();
        for other in [real.clone(), link2, dirlink.join("node.json"), volume.join(".").join("node.json")] {
            let e = StateFile::open(&other).unwrap_err();
            assert_eq!(e.code(), "state_locked", "{}: {e}", other.display());
            assert!(e.to_string().contains(&*other.to_string_lossy()), "{e}");
        }
        drop(f);
        let (_f, restored) = StateFile::open(&real).unwrap();
        assert_eq!(restored.unwrap().term, 5);
        let loop_a = dir.path().join("loop");
        std::os::unix::fs::symlink(&loop_a, &loop_a).unwrap();
        assert_eq!(StateFile::open(&loop_a).unwrap_err().code(), "state_unwritable");
    }

    /// The lock file goes when the state file is closed, and when opening fails after the lock
    /// was taken (a corrupt file); a holder's lock file is never removed by a refused opener.
    #[test]
    fn no_lock_file_is_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let lock = dir.path().join("s.json.lock");
        let (f, _) = StateFile::open(&path).unwrap();
        assert!(lock.exists());
        assert_eq!(StateFile::open(&path).unwrap_err().code(), "state_locked");
        assert!(lock.exists(), "a refused opener leaves the holder's lock alone");
        drop(f);
        assert!(!lock.exists(), "closed: no lock file");
        std::fs::write(&path, "not a state file").unwrap();
        assert_eq!(StateFile::open(&path).unwrap_err().code(), "state_corrupt");
        assert!(!lock.exists(), "a failed open leaves no lock file");
        let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(entries, vec![std::ffi::OsString::from("s.json")]);
    }

    /// Ids that the old one-line format could not carry (`-`, whitespace, newlines, quotes) go
    /// through the file itself unchanged.
    #[test]
    fn ids_the_old_format_lost_round_trip_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        for id in ["-", " ", "a b", "a\nb", "\"", "{", "null", "7 -", "\u{0}", "é:1"] {
            let state = DurableState { term: 3, voted_for: Some(id.into()) };
            let (mut f, _) = StateFile::open(&path).unwrap();
            f.store(&state).unwrap();
            drop(f);
            assert_eq!(StateFile::open(&path).unwrap().1, Some(state), "{id:?}");
        }
    }

    proptest! {
        /// Every id the core accepts (1 to 255 bytes of UTF-8) round-trips, as does every term.
        #[test]
        fn every_accepted_id_round_trips(term in any::<u64>(), id in proptest::option::of("\\PC{1,64}|[\\x00-\\x7f]{1,255}")) {
            let id = id.filter(|s| !s.is_empty() && s.len() <= tenure::MAX_ID_LEN);
            let state = DurableState { term, voted_for: id };
            prop_assert_eq!(decode(&encode(&state)), Ok(state));
        }
    }
}
