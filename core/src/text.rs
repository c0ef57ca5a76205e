//! Error and warning messages assembled from `&'static str` pieces and integers, without
//! `core::fmt`: a WebAssembly build that reports an error links no formatting machinery,
//! and every binding shows the same text (`Display` writes the same string).

use alloc::string::String;

/// A message under construction.
pub(crate) struct Text(String);

impl Text {
    // `new` and `s` are called, not inlined, in the WebAssembly builds: a call is a few bytes at
    // each of the messages' many pieces, an inlined copy a few dozen.
    #[cfg_attr(target_arch = "wasm32", inline(never))]
    pub(crate) fn new(first: &str) -> Text {
        Text(String::from(first))
    }

    /// Appends a piece of text.
    #[cfg_attr(target_arch = "wasm32", inline(never))]
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

    /// Digit by digit from the highest power of ten that fits: no digit table and no buffer to
    /// index (the `itoa` crate's two-digit table cost the component about 300 bytes).
    fn u64(mut self, n: u64) -> Text {
        // At most 10^19 (u64::MAX has 20 digits): the multiplication cannot overflow.
        let mut unit = 1;
        while n / unit >= 10 {
            unit *= 10;
        }
        loop {
            self.0.push(char::from(b'0' + (n / unit % 10) as u8));
            if unit == 1 {
                return self;
            }
            unit /= 10;
        }
    }

    /// Appends `"s"`, quoted.
    pub(crate) fn q(self, s: &str) -> Text {
        self.s("\"").s(s).s("\"")
    }

    pub(crate) fn done(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::Text;
    use alloc::string::ToString;

    #[test]
    fn integers_are_written_in_decimal() {
        for n in [0, 1, 9, 10, 11, 99, 100, 101, 1_000, 4_294_967_296, 10_000_000_000_000_000_000, u64::MAX] {
            assert_eq!(Text::new("").n(n).done(), n.to_string());
        }
        for k in 0..20 {
            let unit = 10u64.pow(k);
            for n in [unit - 1, unit, unit + 1] {
                assert_eq!(Text::new("").n(n).done(), n.to_string());
            }
        }
        assert_eq!(Text::new("a ").n(7u32).s(" b ").size(12).done(), "a 7 b 12");
    }
}
