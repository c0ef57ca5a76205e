//! Error and warning messages assembled from `&'static str` pieces and integers, without
//! `core::fmt`: a WebAssembly build that reports an error links no formatting machinery (issue 18),
//! and every binding shows the same text (`Display` writes the same string).

use alloc::string::String;

/// A message under construction.
pub(crate) struct Text(String);

impl Text {
    pub(crate) fn new(first: &str) -> Text {
        Text(String::from(first))
    }

    /// Appends a piece of text.
    pub(crate) fn s(mut self, piece: &str) -> Text {
        self.0.push_str(piece);
        self
    }

    /// Appends an integer in decimal. One `u64` formatter for every width: a copy per integer
    /// type would only add code to the WebAssembly builds.
    #[inline]
    pub(crate) fn n(self, n: impl Into<u64>) -> Text {
        self.u64(n.into())
    }

    /// Appends a length or count in decimal.
    pub(crate) fn size(self, n: usize) -> Text {
        // usize is at most 64 bits on every target Rust supports.
        self.u64(n as u64)
    }

    fn u64(mut self, n: u64) -> Text {
        self.0.push_str(itoa::Buffer::new().format(n));
        self
    }

    /// Appends `"s"`, quoted.
    pub(crate) fn q(self, s: &str) -> Text {
        self.s("\"").s(s).s("\"")
    }

    pub(crate) fn done(self) -> String {
        self.0
    }
}
