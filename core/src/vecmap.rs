//! Small sorted-vector map and set keyed by node id.
//!
//! A node tracks a handful of peers; sorted `Vec`s (the keys, and beside them the values) keep
//! each entry without an allocation of its own (a B-tree node is sized for 11 entries) and,
//! compiled to WebAssembly, avoid a separate copy of the B-tree code for every value type.
//! Lookups are binary searches over the keys alone, iteration is in id order, exactly like the
//! `BTreeMap` it replaces.
//!
//! The ids themselves live in one buffer per map, not one allocation per key: a key is an 8-byte
//! [`Name`] (offset and length). The buffer starts with a fixed prefix given at construction (the
//! node's bootstrap list, space-separated: ids hold no whitespace), whose ids keys point into
//! instead of copying them; other ids are appended, and the appended part is compacted once
//! removed ids make up more than half of it.

use alloc::string::String;
use alloc::vec::Vec;

/// Where a key's bytes are in [`IdMap::names`].
#[derive(Debug, Clone, Copy)]
#[cfg_attr(feature = "model-check", derive(Hash))]
struct Name {
    at: u32,
    len: u32,
}

/// The id `n` names in `names` (empty if out of range, which the map never produces).
///
/// The core slices every `str` with a `Range` (`0..n`, `n..len`), never `..n` or `n..`: in the
/// WebAssembly builds each range type is a copy of `str::get` of its own (about 100 bytes for the
/// two others).
fn name(names: &str, n: Name) -> &str {
    let start = n.at as usize;
    names.get(start..start.saturating_add(n.len as usize)).unwrap_or("")
}

/// The keys of an [`IdMap`]: the id bytes and the sorted [`Name`]s. Everything that touches only
/// ids (search, interning, compaction) lives here, compiled once: in `IdMap<V>` it would be copied
/// into the WebAssembly builds once per value type.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "model-check", derive(Hash))]
struct Keys {
    /// The fixed prefix, then the appended ids.
    names: String,
    /// Length of the fixed prefix.
    fixed: u32,
    /// Sorted by id; `IdMap::values` holds the value of each at the same index.
    keys: Vec<Name>,
}

impl Keys {
    /// The prefix given to [`IdMap::with_prefix`].
    fn prefix(&self) -> &str {
        self.names.get(0..self.fixed as usize).unwrap_or("")
    }
    /// See [`IdMap::prefix_ids`].
    fn prefix_ids(&self) -> impl Iterator<Item = (usize, &str)> {
        let prefix = self.prefix();
        let mut at = 0usize;
        prefix.as_bytes().split(|&b| b == b' ').map(move |token| {
            let start = at;
            let end = start.saturating_add(token.len());
            at = end.saturating_add(1);
            // Split at ASCII spaces, so both ends are char boundaries.
            (start, prefix.get(start..end).unwrap_or_default())
        })
    }
    fn name(&self, i: usize) -> Option<&str> {
        self.keys.get(i).map(|k| name(&self.names, *k))
    }
    fn find(&self, id: &str) -> Result<usize, usize> {
        let names = &self.names;
        self.keys.binary_search_by(|k| name(names, *k).cmp(id))
    }
    /// Whether the key at `hint` is `id` (one comparison instead of a search).
    fn hit(&self, hint: Option<usize>, id: &str) -> Option<usize> {
        let i = hint?;
        (self.name(i)? == id).then_some(i)
    }
    fn hinted(&self, hint: Option<usize>, id: &str) -> Option<usize> {
        self.hit(hint, id).or_else(|| self.find(id).ok())
    }
    /// Adds `id` (not yet a key) at `i`, its sorted place: its place in the prefix, or else
    /// appended.
    fn insert(&mut self, i: usize, id: &str) {
        let len = u32::try_from(id.len()).unwrap_or(u32::MAX);
        let shared = self.prefix_ids().find(|(_, token)| *token == id).map(|(at, _)| at);
        let at = shared.unwrap_or_else(|| {
            self.names.reserve_exact(id.len());
            let at = self.names.len();
            self.names.push_str(id);
            at
        });
        self.keys.insert(i, Name { at: u32::try_from(at).unwrap_or(u32::MAX), len });
    }
    fn remove(&mut self, i: usize) {
        self.keys.remove(i);
        self.compact();
    }
    /// Rebuilds the appended part once removed ids fill more than half of it.
    fn compact(&mut self) {
        let fixed = self.fixed;
        let appended = self.names.len().saturating_sub(fixed as usize);
        let live: usize = self.keys.iter().filter(|k| k.at >= fixed).map(|k| k.len as usize).sum();
        if live.saturating_mul(2) >= appended {
            return;
        }
        let mut names = String::with_capacity((fixed as usize).saturating_add(live));
        names.push_str(self.prefix());
        for k in self.keys.iter_mut().filter(|k| k.at >= fixed) {
            let at = u32::try_from(names.len()).unwrap_or(u32::MAX);
            names.push_str(name(&self.names, *k));
            k.at = at;
        }
        self.names = names;
    }
}

/// A map from id to `V`, sorted by id.
#[derive(Debug, Clone)]
#[cfg_attr(feature = "model-check", derive(Hash))]
pub(crate) struct IdMap<V> {
    keys: Keys,
    /// The value of `keys.keys[i]` at `i`.
    values: Vec<V>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap { keys: Keys::default(), values: Vec::new() }
    }
}

impl<V> IdMap<V> {
    pub(crate) fn new() -> Self {
        Self::default()
    }
    /// A map whose keys share the bytes of `prefix` (ids separated by single spaces), which
    /// [`IdMap::prefix_ids`] lists unchanged for as long as the map lives.
    pub(crate) fn with_prefix(prefix: String) -> Self {
        let fixed = u32::try_from(prefix.len()).unwrap_or(u32::MAX);
        IdMap { keys: Keys { names: prefix, fixed, keys: Vec::new() }, values: Vec::new() }
    }
    /// The ids of the prefix (empty ones included), each with its offset. Split by byte: a
    /// `str::split(' ')` links a char searcher (~0.6 KB of WebAssembly) for no gain.
    pub(crate) fn prefix_ids(&self) -> impl Iterator<Item = (usize, &str)> {
        self.keys.prefix_ids()
    }
    pub(crate) fn get(&self, id: &str) -> Option<&V> {
        self.values.get(self.keys.find(id).ok()?)
    }
    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut V> {
        self.values.get_mut(self.keys.find(id).ok()?)
    }
    /// Where `id`'s entry is, trying the entry at `hint` first (see [`IdMap::get_hinted_mut`]); the
    /// result is the index for [`IdMap::at_mut`] and [`IdMap::get_at_or_find`] while the map is
    /// unchanged, and the hint for [`IdMap::get_hinted_mut`]: one search at most serves every access
    /// to a peer while one message is handled.
    pub(crate) fn index_of_hinted(&self, hint: Option<usize>, id: &str) -> Option<usize> {
        self.keys.hinted(hint, id)
    }
    /// [`IdMap::get_mut`], trying the entry at `hint` first (the map may have changed since the
    /// hint was taken: it is checked, and a miss falls back to the search).
    pub(crate) fn get_hinted_mut(&mut self, hint: Option<usize>, id: &str) -> Option<&mut V> {
        self.values.get_mut(self.keys.hinted(hint, id)?)
    }
    /// The value at `index` (from [`IdMap::index_of_hinted`], with the map unchanged since), and
    /// its key: the caller that just found the entry need not compare the id again.
    pub(crate) fn at_mut(&mut self, index: usize) -> Option<(&str, &mut V)> {
        Some((self.keys.name(index)?, self.values.get_mut(index)?))
    }
    /// `id`'s value: the one at `index` when given (from [`IdMap::index_of_hinted`], with the map
    /// unchanged since: not compared again), else searched for.
    pub(crate) fn get_at_or_find(&self, index: Option<usize>, id: &str) -> Option<&V> {
        let i = match index {
            Some(i) => i,
            None => self.keys.find(id).ok()?,
        };
        debug_assert_eq!(self.keys.name(i), Some(id), "a stale index");
        self.values.get(i)
    }
    pub(crate) fn contains_key(&self, id: &str) -> bool {
        self.keys.find(id).is_ok()
    }
    /// Inserts or replaces; returns whether the id was new.
    pub(crate) fn insert(&mut self, id: &str, v: V) -> bool {
        match self.keys.find(id) {
            Ok(i) => {
                if let Some(e) = self.values.get_mut(i) {
                    *e = v;
                }
                false
            }
            Err(i) => {
                self.keys.insert(i, id);
                self.values.insert(i, v);
                true
            }
        }
    }
    pub(crate) fn remove(&mut self, id: &str) -> Option<V> {
        let i = self.keys.find(id).ok()?;
        self.keys.remove(i);
        Some(self.values.remove(i))
    }
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
    /// By index on wasm32, where `zip`'s random-access machinery is a few hundred bytes per value
    /// type; zipped elsewhere (no bounds check per entry).
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        let keys = &self.keys;
        self.values.iter().enumerate().map(move |(i, v)| (keys.name(i).unwrap_or_default(), v))
    }
    #[cfg(not(target_arch = "wasm32"))]
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        let names = &self.keys.names;
        self.keys.keys.iter().map(move |k| name(names, *k)).zip(&self.values)
    }
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        let names = &self.keys.names;
        self.keys.keys.iter().map(move |k| name(names, *k))
    }
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.values.iter()
    }
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.values.iter_mut()
    }
    /// Reserves room for exactly `n` more entries (a bootstrap list of known length).
    pub(crate) fn reserve_exact(&mut self, n: usize) {
        self.keys.keys.reserve_exact(n);
        self.values.reserve_exact(n);
    }
}

/// A set of ids, sorted.
pub(crate) type IdSet = IdMap<()>;

impl IdMap<()> {
    /// Adds an id; returns whether it was new.
    pub(crate) fn add(&mut self, id: &str) -> bool {
        if self.contains_key(id) {
            return false;
        }
        self.insert(id, ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_is_checked_before_use() {
        let mut m = IdMap::new();
        for (i, id) in ["a", "b", "c"].into_iter().enumerate() {
            m.insert(id, i);
        }
        for hint in [None, Some(0), Some(1), Some(2), Some(99)] {
            assert_eq!(m.index_of_hinted(hint, "b"), Some(1));
            assert_eq!(m.index_of_hinted(hint, "z"), None);
            assert_eq!(m.get_hinted_mut(hint, "a").copied(), Some(0));
        }
        // An index just found is used as it is; without one, the id is searched for.
        let at = m.index_of_hinted(None, "c");
        assert_eq!(m.get_at_or_find(at, "c"), Some(&2));
        assert_eq!(m.get_at_or_find(None, "c"), Some(&2));
        assert_eq!(m.get_at_or_find(None, "z"), None);
        assert_eq!(m.at_mut(1).map(|(k, v)| (String::from(k), *v)), Some((String::from("b"), 1)));
        assert!(m.at_mut(3).is_none());
    }

    #[test]
    fn behaves_like_a_sorted_map() {
        let mut m = IdMap::new();
        assert!(m.insert("b", 2));
        assert!(m.insert("a", 1));
        assert!(!m.insert("b", 3));
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(m.get("b"), Some(&3));
        assert_eq!(m.remove("a"), Some(1));
        assert_eq!(m.remove("a"), None);
        assert!(!m.contains_key("a") && m.len() == 1);
        let mut s = IdSet::new();
        assert!(s.add("x") && !s.add("x"));
    }

    #[test]
    fn keys_share_the_prefix_and_appended_ids_are_compacted() {
        let mut m = IdMap::with_prefix(String::from("c a b a"));
        for id in ["a", "b", "c"] {
            assert!(m.insert(id, 0));
        }
        // Every key points into the prefix: nothing was appended.
        assert_eq!(m.keys.names.len(), 7);
        for round in 0..50u32 {
            let id = alloc::format!("x{round}");
            assert!(m.insert(&id, round));
            assert_eq!(m.remove(&id), Some(round));
            assert!(m.keys.names.len() <= 7 + 2 * 4, "removed ids are compacted away");
        }
        assert!(m.insert("z", 9) && m.insert("d", 8));
        assert_eq!(m.remove("b"), Some(0));
        assert_eq!(m.keys().collect::<Vec<_>>(), ["a", "c", "d", "z"]);
        assert_eq!(m.get("z"), Some(&9));
        assert_eq!(m.keys.prefix(), "c a b a");
    }
}
