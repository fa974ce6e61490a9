//! kNode: what the device knows of one live key: the key itself, its 128-bit signature, and where
//! its record is (the UST's UTID, the record's byte `Offset` inside the UST, its `Len`).
//!
//! The signature is FNV-1a with 128-bit state (offset basis 0x6c62272e07bb014262b821756295c58d,
//! prime 2^88 + 0x13b), a fixed, well-known hash: comparing two signatures is one 128-bit compare,
//! and the key bytes are compared only when the signatures match. The global index takes its bucket
//! from the signature's most significant byte, the best-mixed byte of FNV-1a (its low byte depends
//! only on the inputs' low bits).

/// FNV-1a, 128-bit: offset basis.
const FNV128_OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
/// FNV-1a, 128-bit: prime.
const FNV128_PRIME: u128 = (1 << 88) + 0x13b;

/// The 128-bit signature of `key`.
pub fn signature(key: &[u8]) -> u128 {
    key.iter().fold(FNV128_OFFSET, |h, &b| (h ^ b as u128).wrapping_mul(FNV128_PRIME))
}

/// UTID of a kNode whose record is still in the write buffer (its UST has no UTID yet).
pub const IN_BUFFER: u32 = u32::MAX;

/// One live key and where its record is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KNode {
    pub key: Box<[u8]>,
    pub signature: u128,
    /// The UST holding the record ([`IN_BUFFER`] while it is in the write buffer).
    pub utid: u32,
    /// Byte address of the record inside its UST (or the write buffer).
    pub offset: u32,
    /// Bytes of the record (header, key and value).
    pub len: u32,
}

impl KNode {
    /// Whether this kNode is for `key`, whose signature is `signature`.
    pub fn is(&self, key: &[u8], signature: u128) -> bool {
        self.signature == signature && *self.key == *key
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signature_is_fnv1a_128() {
        // Published FNV-1a 128-bit test vectors.
        assert_eq!(signature(b""), 0x6c62272e07bb014262b821756295c58d);
        assert_eq!(signature(b"a"), 0xd228cb696f1a8caf78912b704e4a8964);
        assert_eq!(signature(b"foobar"), 0x343e1662793c64bf6f0d3597ba446f18);
        assert_ne!(signature(b"ab"), signature(b"ba"));
    }
}
