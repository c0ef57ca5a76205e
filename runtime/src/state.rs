//! The state file: one format and one writer for every host.
//!
//! Format: one JSON object, `{"term": 4, "voted_for": "127.0.0.1:7002"}` (`null`: no vote), with a
//! final newline. The old one-line format (`4 127.0.0.1:7002`, `-` for no vote) written by the
//! earlier Python, Node.js and wasmtime runtimes is read too; the runtime rewrites it as JSON at
//! start.
//!
//! Writing: `PATH.tmp` is written and fsynced, renamed over `PATH`, then the directory is
//! fsynced, so a crash leaves either the old or the new pair, never a torn one. `PATH.lock` is
//! locked exclusively (`flock`) while a [`StateFile`] is open: a second process opening the same
//! path fails with [`RuntimeError::StateLocked`]. (The lock is on its own file because the rename
//! replaces `PATH`'s inode at every write.)

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
    path: PathBuf,
    tmp: PathBuf,
    dir: PathBuf,
    _lock: File,
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
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(RuntimeError::StateDirMissing { path });
        }
        if path.is_dir() {
            return Err(RuntimeError::StateUnwritable { path, message: "it is a directory".into() });
        }
        let unwritable = |e: std::io::Error, path: &Path| RuntimeError::StateUnwritable {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let lock_path = with_suffix(&path, ".lock");
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(|e| unwritable(e, &path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Err(RuntimeError::StateLocked { path }),
            Err(std::fs::TryLockError::Error(e)) => return Err(unwritable(e, &path)),
        }
        let restored = match std::fs::read(&path) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|_| RuntimeError::StateNotUtf8 { path: path.clone() })?;
                Some(decode(&text).map_err(|message| RuntimeError::StateCorrupt { path: path.clone(), message })?)
            }
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(RuntimeError::StateRead { path, message: e.to_string() }),
        };
        let mut file = StateFile { tmp: with_suffix(&path, ".tmp"), path, dir, _lock: lock };
        file.store(restored.as_ref().unwrap_or(&DurableState::default()))?;
        Ok((file, restored))
    }

    /// The state file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes `state` durable (temp file, fsync, rename, fsync of the directory).
    pub fn store(&mut self, state: &DurableState) -> Result<(), RuntimeError> {
        let fail =
            |e: std::io::Error| RuntimeError::StateUnwritable { path: self.path.clone(), message: e.to_string() };
        let mut f = File::create(&self.tmp).map_err(fail)?;
        f.write_all(encode(state).as_bytes()).map_err(fail)?;
        f.sync_all().map_err(fail)?;
        drop(f);
        std::fs::rename(&self.tmp, &self.path).map_err(fail)?;
        File::open(&self.dir).and_then(|d| d.sync_all()).map_err(fail)?;
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
