//! FNV-1a, 64 bits: the family's one non-cryptographic hash, for keys that are stored or
//! compared across runs (fingerprints, argument hashes, corpus halves) and for small hash maps
//! whose keys are trusted. A leaf.

/// The FNV-1a 64 state. [`Default`] and [`Fnv1a::new`] start at the offset basis, so it can
/// also be a [`std::hash::BuildHasherDefault`] hasher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fnv1a(u64);

impl Fnv1a {
    /// The offset basis.
    pub const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    /// The prime.
    pub const PRIME: u64 = 0x0000_0100_0000_01b3;

    /// A fresh hash.
    #[inline]
    pub fn new() -> Self {
        Self(Self::OFFSET_BASIS)
    }

    /// Hashes one byte.
    #[inline(always)]
    pub fn byte(&mut self, b: u8) {
        self.0 = (self.0 ^ u64::from(b)).wrapping_mul(Self::PRIME);
    }

    /// Hashes `bytes` in order.
    #[inline(always)]
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.bytes_mapped(bytes, |b| b);
    }

    /// Hashes `map(b)` for each byte of `bytes` (such as an ASCII lowercasing).
    #[inline(always)]
    pub fn bytes_mapped(&mut self, bytes: &[u8], map: impl Fn(u8) -> u8) {
        let mut h = self.0;
        for &b in bytes {
            h = (h ^ u64::from(map(b))).wrapping_mul(Self::PRIME);
        }
        self.0 = h;
    }

    /// The hash so far.
    #[inline]
    pub fn value(&self) -> u64 {
        self.0
    }

    /// The hash of `bytes` alone.
    #[inline]
    pub fn of(bytes: &[u8]) -> u64 {
        let mut h = Self::new();
        h.bytes(bytes);
        h.0
    }
}

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

impl std::hash::Hasher for Fnv1a {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.bytes(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_vectors() {
        // From the FNV reference test suite (fnv-1a, 64 bits).
        assert_eq!(Fnv1a::of(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(Fnv1a::of(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(Fnv1a::of(b"foobar"), 0x8594_4171_f739_67e8);
        let mut split = Fnv1a::new();
        split.bytes(b"foo");
        split.byte(b'b');
        split.bytes_mapped(b"AR", |b| b.to_ascii_lowercase());
        assert_eq!(split.value(), Fnv1a::of(b"foobar"));
    }
}
