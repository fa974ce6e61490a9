//! The physical layout of a log file, exactly LevelDB's (doc/log_format.md):
//!
//! - The file is a sequence of 32 KiB blocks; only the last may be partial.
//! - A block holds physical records, each a 7-byte header then its payload:
//!   `masked crc32c (4 bytes, LE) | length (2 bytes, LE) | type (1 byte) | payload[length]`.
//!   The checksum covers the type byte followed by the payload.
//! - A record never starts in the last 6 bytes of a block: those bytes (the trailer) are zeros.
//! - A logical record that does not fit in the rest of a block is split into fragments
//!   FIRST, MIDDLE*, LAST; one that fits is a single FULL record. Type 0 is reserved for
//!   preallocated, zero-filled areas and is never written.

use crate::coding::get_fixed32;
use crate::crc;

/// Size of a block.
pub const BLOCK_SIZE: usize = 32 * 1024;

/// Size of a physical record header: checksum (4) + length (2) + type (1).
pub const HEADER_SIZE: usize = 7;

/// The largest payload one physical record can carry.
pub const MAX_FRAGMENT: usize = BLOCK_SIZE - HEADER_SIZE;

/// The type byte of a physical record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordType {
    /// Preallocated zero bytes; never written by [`crate::wal::LogWriter`].
    Zero = 0,
    /// A whole logical record.
    Full = 1,
    /// The first fragment of a logical record.
    First = 2,
    /// An inner fragment.
    Middle = 3,
    /// The last fragment.
    Last = 4,
}

impl RecordType {
    pub fn from_u8(b: u8) -> Option<RecordType> {
        match b {
            0 => Some(RecordType::Zero),
            1 => Some(RecordType::Full),
            2 => Some(RecordType::First),
            3 => Some(RecordType::Middle),
            4 => Some(RecordType::Last),
            _ => None,
        }
    }
}

/// The masked checksum a header stores for a record of type `ty` carrying `payload`.
pub fn record_crc(ty: u8, payload: &[u8]) -> u32 {
    crc::mask(crc::crc32c_extend(crc::crc32c(&[ty]), payload))
}

/// Encodes the header of a physical record. `payload.len()` must be at most [`MAX_FRAGMENT`].
pub fn encode_header(ty: RecordType, payload: &[u8]) -> [u8; HEADER_SIZE] {
    debug_assert!(payload.len() <= MAX_FRAGMENT);
    let mut out = [0u8; HEADER_SIZE];
    out[..4].copy_from_slice(&record_crc(ty as u8, payload).to_le_bytes());
    out[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
    out[6] = ty as u8;
    out
}

/// A decoded header: (stored masked checksum, payload length, type byte). `None` if `src` is
/// shorter than a header.
pub fn decode_header(src: &[u8]) -> Option<(u32, usize, u8)> {
    let h = src.get(..HEADER_SIZE)?;
    let crc = get_fixed32(h)?;
    let len = u16::from_le_bytes([h[4], h[5]]) as usize;
    Some((crc, len, h[6]))
}

/// Whether `block[pos..]` starts a well-formed physical record (any known non-zero type, a
/// length that stays inside `block`, a matching checksum). Returns its payload length.
pub fn valid_record_at(block: &[u8], pos: usize) -> Option<(usize, RecordType)> {
    let (crc, len, ty) = decode_header(block.get(pos..)?)?;
    let ty_parsed = RecordType::from_u8(ty)?;
    if ty_parsed == RecordType::Zero {
        return None;
    }
    let start = pos + HEADER_SIZE;
    let payload = block.get(start..start.checked_add(len)?)?;
    (record_crc(ty, payload) == crc).then_some((len, ty_parsed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_checks() {
        let payload = b"hello";
        let h = encode_header(RecordType::Full, payload);
        let (crc, len, ty) = decode_header(&h).unwrap();
        assert_eq!((len, ty), (5, 1));
        assert_eq!(crc, record_crc(1, payload));
        let mut rec = h.to_vec();
        rec.extend_from_slice(payload);
        assert_eq!(valid_record_at(&rec, 0), Some((5, RecordType::Full)));
        rec[8] ^= 1;
        assert_eq!(valid_record_at(&rec, 0), None);
        assert_eq!(valid_record_at(&rec[..6], 0), None);
        // The checksum covers the type byte.
        assert_ne!(record_crc(1, payload), record_crc(2, payload));
    }
}
