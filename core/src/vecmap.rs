//! Small sorted-vector map and set keyed by node id.
//!
//! A node tracks a handful of peers; a sorted `Vec` keeps each entry in one allocation-free slot
//! (a B-tree node is sized for 11 entries) and, compiled to WebAssembly, avoids a separate copy
//! of the B-tree code for every value type. Lookups are binary searches, iteration is in id
//! order, exactly like the `BTreeMap` it replaces. Keys are `Box<str>` (16 bytes, no spare
//! capacity) rather than `String`.

use alloc::boxed::Box;
use alloc::vec::Vec;

/// A map from id to `V`, sorted by id.
#[derive(Debug, Clone)]
pub(crate) struct IdMap<V> {
    entries: Vec<(Box<str>, V)>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        IdMap { entries: Vec::new() }
    }
}

impl<V> IdMap<V> {
    pub(crate) fn new() -> Self {
        Self::default()
    }
    fn find(&self, id: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| (**k).cmp(id))
    }
    pub(crate) fn get(&self, id: &str) -> Option<&V> {
        self.find(id).ok().and_then(|i| self.entries.get(i)).map(|(_, v)| v)
    }
    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut V> {
        match self.find(id) {
            Ok(i) => self.entries.get_mut(i).map(|(_, v)| v),
            Err(_) => None,
        }
    }
    pub(crate) fn contains_key(&self, id: &str) -> bool {
        self.find(id).is_ok()
    }
    /// Inserts or replaces; returns whether the id was new.
    pub(crate) fn insert(&mut self, id: &str, v: V) -> bool {
        match self.find(id) {
            Ok(i) => {
                if let Some(e) = self.entries.get_mut(i) {
                    e.1 = v;
                }
                false
            }
            Err(i) => {
                self.entries.insert(i, (Box::from(id), v));
                true
            }
        }
    }
    pub(crate) fn remove(&mut self, id: &str) -> Option<V> {
        self.find(id).ok().map(|i| self.entries.remove(i).1)
    }
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.entries.iter().map(|(k, v)| (&**k, v))
    }
    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| &**k)
    }
    /// Reserves room for exactly `n` more entries (a bootstrap list of known length).
    pub(crate) fn reserve_exact(&mut self, n: usize) {
        self.entries.reserve_exact(n);
    }
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
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
}
