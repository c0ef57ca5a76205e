//! HMAC-SHA256 (RFC 2104 over FIPS 180-4) written for size: the WebAssembly builds use it instead
//! of the `hmac` and `sha2` crates, whose generic block-buffer and digest layers cost the component
//! about a kilobyte more for the same bytes. Native builds keep the crates (and their speed); the
//! tests below hold this one to them byte for byte, over random keys, messages and splits.
//!
//! Bytes go through the block buffer one at a time: the datagrams it tags are a few hundred bytes,
//! and the rounds, not the copying, are what a tag costs.

/// The round constants.
const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
];

/// The initial hash value.
const H0: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/// A SHA-256 computation in progress.
#[derive(Clone)]
struct Sha256 {
    h: [u32; 8],
    block: [u8; 64],
    /// Bytes absorbed so far.
    len: u64,
}

impl Sha256 {
    fn new() -> Sha256 {
        Sha256 { h: H0, block: [0; 64], len: 0 }
    }

    fn update(&mut self, data: &[u8]) {
        for &b in data {
            self.block[(self.len % 64) as usize] = b;
            self.len = self.len.wrapping_add(1);
            if self.len.is_multiple_of(64) {
                compress(&mut self.h, &self.block);
            }
        }
    }

    fn finish(mut self) -> [u8; 32] {
        let bits = self.len.wrapping_mul(8);
        self.update(&[0x80]);
        while self.len % 64 != 56 {
            self.update(&[0]);
        }
        for i in (0..8).rev() {
            self.update(&[(bits >> (8 * i)) as u8]);
        }
        let mut out = [0; 32];
        for (i, o) in out.iter_mut().enumerate() {
            *o = (self.h[i / 4] >> (24 - 8 * (i % 4))) as u8;
        }
        out
    }
}

fn compress(h: &mut [u32; 8], block: &[u8; 64]) {
    let mut w = [0u32; 64];
    for i in 0..64 {
        w[i] = if i < 16 {
            u32::from_be_bytes([block[4 * i], block[4 * i + 1], block[4 * i + 2], block[4 * i + 3]])
        } else {
            let (a, b) = (w[i - 15], w[i - 2]);
            let s0 = a.rotate_right(7) ^ a.rotate_right(18) ^ (a >> 3);
            let s1 = b.rotate_right(17) ^ b.rotate_right(19) ^ (b >> 10);
            w[i - 16].wrapping_add(s0).wrapping_add(w[i - 7]).wrapping_add(s1)
        };
    }
    let mut s = *h;
    for i in 0..64 {
        let [a, b, c, d, e, f, g, x] = s;
        let t1 = x
            .wrapping_add(e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25))
            .wrapping_add((e & f) ^ (!e & g))
            .wrapping_add(K[i])
            .wrapping_add(w[i]);
        let t2 =
            (a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22)).wrapping_add((a & b) ^ (a & c) ^ (b & c));
        s = [t1.wrapping_add(t2), a, b, c, d.wrapping_add(t1), e, f, g];
    }
    for (x, y) in h.iter_mut().zip(s) {
        *x = x.wrapping_add(y);
    }
}

/// A keyed HMAC-SHA256 state: the same calls as `hmac::Hmac<sha2::Sha256>` where the wire code
/// uses them.
#[derive(Clone)]
pub(crate) struct HmacSha256 {
    inner: Sha256,
    /// The outer hash with the padded key absorbed.
    outer: Sha256,
}

impl core::fmt::Debug for HmacSha256 {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("HmacSha256 { .. }")
    }
}

impl HmacSha256 {
    /// HMAC accepts keys of any length (a key longer than a block is hashed first).
    pub(crate) fn new(key: &[u8]) -> HmacSha256 {
        let mut padded = [0u8; 64];
        if key.len() > 64 {
            let mut s = Sha256::new();
            s.update(key);
            for (p, b) in padded.iter_mut().zip(s.finish()) {
                *p = b;
            }
        } else {
            for (p, b) in padded.iter_mut().zip(key) {
                *p = *b;
            }
        }
        let (mut inner, mut outer) = (Sha256::new(), Sha256::new());
        for b in padded {
            inner.update(&[b ^ 0x36]);
            outer.update(&[b ^ 0x5c]);
        }
        HmacSha256 { inner, outer }
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        self.inner.update(data);
    }

    /// The tag.
    pub(crate) fn finalize(self) -> [u8; 32] {
        let mut outer = self.outer;
        outer.update(&self.inner.finish());
        outer.finish()
    }

    /// Whether `tag` is the tag, compared in constant time.
    pub(crate) fn verify(self, tag: &[u8]) -> bool {
        let mine = self.finalize();
        let diff = mine.iter().zip(tag).fold(0u8, |d, (a, b)| d | (a ^ b));
        tag.len() == mine.len() && core::hint::black_box(diff) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::HmacSha256;
    use alloc::vec::Vec;
    use hmac::Mac;
    use proptest::prelude::*;

    type Reference = hmac::Hmac<sha2::Sha256>;

    fn both(key: &[u8], parts: &[&[u8]]) -> ([u8; 32], [u8; 32]) {
        let mut mine = HmacSha256::new(key);
        let mut theirs = <Reference as Mac>::new_from_slice(key).unwrap();
        for p in parts {
            mine.update(p);
            theirs.update(p);
        }
        (mine.finalize(), theirs.finalize().into_bytes().into())
    }

    #[test]
    fn rfc_4231_case_2() {
        let (tag, _) = both(b"Jefe", &[b"what do ya want ", b"for nothing?"]);
        let want = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843";
        let hex: alloc::string::String = tag.iter().map(|b| alloc::format!("{b:02x}")).collect();
        assert_eq!(hex, want);
    }

    #[test]
    fn every_length_around_the_block_boundaries() {
        let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
        for klen in [0, 1, 31, 32, 55, 56, 63, 64, 65, 100, 128, 200] {
            for mlen in 0..data.len() {
                let (a, b) = both(&data[..klen], &[&data[..mlen]]);
                assert_eq!(a, b, "key {klen} message {mlen}");
            }
        }
    }

    #[test]
    fn verify_takes_exactly_the_tag() {
        let (tag, _) = both(b"k", &[b"m"]);
        let m = || {
            let mut m = HmacSha256::new(b"k");
            m.update(b"m");
            m
        };
        assert!(m().verify(&tag));
        assert!(!m().verify(&tag[..31]));
        let mut flipped = tag;
        flipped[31] ^= 1;
        assert!(!m().verify(&flipped));
        let mut longer = tag.to_vec();
        longer.push(0);
        assert!(!m().verify(&longer));
    }

    proptest! {
        #[test]
        fn equals_the_hmac_crate(key in proptest::collection::vec(any::<u8>(), 0..150),
                                 data in proptest::collection::vec(any::<u8>(), 0..400),
                                 cut in 0usize..400, clone_at in 0usize..400) {
            let cut = cut.min(data.len());
            let (a, b) = both(&key, &[&data[..cut], &data[cut..]]);
            prop_assert_eq!(a, b);
            // A clone taken mid-way continues on its own, as the wire code's per-receiver states do.
            let clone_at = clone_at.min(data.len());
            let mut m = HmacSha256::new(&key);
            m.update(&data[..clone_at]);
            let mut c = m.clone();
            c.update(&data[clone_at..]);
            m.update(&data[clone_at..]);
            prop_assert_eq!(c.finalize(), m.finalize());
        }
    }
}
