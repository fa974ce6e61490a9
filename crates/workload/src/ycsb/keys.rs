//! YCSB key names and random field bytes.

use crate::fnv::fnvhash64;
use rand::Rng;

/// YCSB's `CoreWorkload.buildKeyName`: `"user"`, then `'0'`s up to `zero_padding` digits, then the decimal key number
/// (hashed with `fnvhash64` first when `hashed`).
pub fn build_key_name(keynum: u64, zero_padding: u32, hashed: bool) -> Vec<u8> {
    let k = if hashed { fnvhash64(keynum) } else { keynum };
    let mut digits = [0u8; 20];
    let mut n = k;
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = &digits[i..];
    let fill = (zero_padding as usize).saturating_sub(digits.len());
    let mut key = Vec::with_capacity(4 + fill + digits.len());
    key.extend_from_slice(b"user");
    key.resize(4 + fill, b'0');
    key.extend_from_slice(digits);
    key
}

/// Append `len` printable bytes the way YCSB's `RandomByteIterator` makes them: one 32-bit draw per six bytes, the
/// bytes taking bits 0-4, 5-10, 10-16, 15-19, 20-25 and 25-31 of the draw (masks 31, 63, 95, 31, 63, 95) plus `' '`.
pub fn fill_random_printable(rng: &mut (impl Rng + ?Sized), len: usize, out: &mut Vec<u8>) {
    out.reserve(len);
    let mut left = len;
    while left > 0 {
        let b = rng.next_u32();
        let chunk = [
            ((b & 31) as u8) + b' ',
            (((b >> 5) & 63) as u8) + b' ',
            (((b >> 10) & 95) as u8) + b' ',
            (((b >> 15) & 31) as u8) + b' ',
            (((b >> 20) & 63) as u8) + b' ',
            (((b >> 25) & 95) as u8) + b' ',
        ];
        let take = left.min(6);
        out.extend_from_slice(&chunk[..take]);
        left -= take;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::seeded;

    #[test]
    fn key_names() {
        // Record 0 under YCSB's default hashed insert order: the key every YCSB user has seen in a trace.
        assert_eq!(build_key_name(0, 1, true), b"user6284781860667377211".to_vec());
        assert_eq!(build_key_name(42, 1, false), b"user42".to_vec());
        assert_eq!(build_key_name(42, 5, false), b"user00042".to_vec());
        assert_eq!(build_key_name(0, 0, false), b"user0".to_vec());
    }

    #[test]
    fn printable_bytes() {
        let mut rng = seeded(1);
        let mut v = Vec::new();
        fill_random_printable(&mut rng, 1003, &mut v);
        assert_eq!(v.len(), 1003);
        assert!(v.iter().all(|&c| (b' '..=b'\x7f').contains(&c)));
        // Bits are used, not wasted: more than 60 distinct byte values appear in 1 KB.
        let mut seen = [false; 256];
        v.iter().for_each(|&c| seen[c as usize] = true);
        assert!(seen.iter().filter(|&&s| s).count() > 60);
    }
}
