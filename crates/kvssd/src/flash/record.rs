//! The on-flash record of one KV pair, written by the "string-byte converter": `klen` (u16, little
//! endian) | key | `vlen` (u32, little endian) | value. Every device of this crate writes it.
//!
//! The seed does not give a format; a record must hold its key because compaction rebuilds the KV
//! pairs of a victim UST or SST from its pages alone. Records are appended back to back and may
//! straddle pages; PLSC's kNode `Offset` and `Len` are the byte address and length of the whole
//! record (header included), so the invalid bytes of a UST plus its live records' bytes are its
//! used bytes.
//!
//! A deletion marker (tombstone, for the LSM in the device) is the same header with `vlen` =
//! [`TOMBSTONE`] and no value bytes. No put can write that length (values are far below 4 GiB), so
//! every put record means what it meant before tombstones existed: PLSC's records are unchanged,
//! and PLSC never writes a tombstone.

use crate::error::RecordError;

/// Bytes of a record that are not key or value: `klen` and `vlen`.
pub const HEADER: usize = 2 + 4;

/// The `vlen` of a tombstone.
pub const TOMBSTONE: u32 = u32::MAX;

/// Bytes of the record of a key of `klen` bytes and a value of `vlen` bytes (a tombstone's is
/// `encoded_len(klen, 0)`).
pub fn encoded_len(klen: usize, vlen: usize) -> usize {
    HEADER + klen + vlen
}

/// Appends the record of `key` and `value` to `out`. The caller checked that the key fits a u16
/// and the value is shorter than [`TOMBSTONE`] (the devices' size limits are far below both).
pub fn encode(key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

/// Appends the tombstone of `key` to `out`.
pub fn encode_tombstone(key: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&TOMBSTONE.to_le_bytes());
}

/// One decoded record, borrowing the bytes it was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub key: &'a [u8],
    /// The value (empty for a tombstone).
    pub value: &'a [u8],
    /// A deletion marker rather than a put.
    pub tombstone: bool,
}

impl Record<'_> {
    /// Bytes of this record on flash.
    pub fn len(&self) -> usize {
        encoded_len(self.key.len(), self.value.len())
    }
}

/// Decodes the record at the start of `bytes`. Fails, saying why, when the bytes end inside the
/// record or its key is empty (no record has one: an empty key is refused at the interface).
pub fn decode(bytes: &[u8]) -> Result<Record<'_>, RecordError> {
    let left = bytes.len();
    let klen = match bytes.get(..2) {
        Some(b) => u16::from_le_bytes([b[0], b[1]]) as usize,
        None => return Err(RecordError::ShortHeader { left, header: HEADER }),
    };
    if klen == 0 {
        return Err(RecordError::EmptyKey);
    }
    let vlen_at = 2 + klen;
    let vlen = match bytes.get(vlen_at..vlen_at + 4) {
        Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        None => return Err(RecordError::KeyPastEnd { key_len: klen, left }),
    };
    let key = &bytes[2..vlen_at];
    let value_at = vlen_at + 4;
    if vlen == TOMBSTONE {
        return Ok(Record { key, value: &bytes[value_at..value_at], tombstone: true });
    }
    let vlen = vlen as usize;
    let value = bytes.get(value_at..value_at + vlen).ok_or(RecordError::ValuePastEnd { value_len: vlen, left })?;
    Ok(Record { key, value, tombstone: false })
}

/// What every design on this record format needs of its configuration: a valid media that keeps
/// page contents (keys and values are decoded from flash pages), and keys whose length fits the
/// record's 16-bit field. `design` names the device in the error.
pub fn check_config(design: &str, media: &flashsim::MediaConfig, max_key_size: usize) -> crate::error::Result<()> {
    media.validate()?;
    let invalid = |field, reason: String| Err(crate::error::KvError::InvalidConfig { field, reason });
    if media.store == flashsim::DataMode::MetadataOnly {
        return invalid(
            "media.store",
            format!("{design} decodes keys and values from its flash pages; metadata-only mode keeps none"),
        );
    }
    if max_key_size == 0 || max_key_size > u16::MAX as usize {
        return invalid(
            "max_key_size",
            format!("{max_key_size} is outside 1..={} (a record stores the key length in 16 bits)", u16::MAX),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_back_to_back() {
        let mut out = Vec::new();
        encode(b"key", b"value", &mut out);
        encode(b"k2", b"", &mut out);
        assert_eq!(out.len(), encoded_len(3, 5) + encoded_len(2, 0));
        let first = decode(&out).unwrap();
        assert_eq!((first.key, first.value, first.tombstone), (&b"key"[..], &b"value"[..], false));
        let second = decode(&out[first.len()..]).unwrap();
        assert_eq!((second.key, second.value, second.tombstone), (&b"k2"[..], &b""[..], false));
        assert!(decode(&out[..out.len() - 1]).is_ok(), "the first record is whole");
        let cut = decode(&out[first.len()..out.len() - 1]).unwrap_err();
        assert!(matches!(cut, RecordError::KeyPastEnd { key_len: 2, .. }), "{cut:?}");
        assert_eq!(decode(&[0, 0, 0]).unwrap_err(), RecordError::EmptyKey);
        assert!(matches!(decode(&[1]).unwrap_err(), RecordError::ShortHeader { left: 1, .. }));
    }

    #[test]
    fn a_tombstone_is_a_header_and_a_key_and_differs_from_an_empty_value() {
        let mut out = Vec::new();
        encode_tombstone(b"gone", &mut out);
        encode(b"gone", b"", &mut out);
        assert_eq!(out.len(), 2 * encoded_len(4, 0));
        let t = decode(&out).unwrap();
        assert_eq!((t.key, t.value, t.tombstone, t.len()), (&b"gone"[..], &b""[..], true, encoded_len(4, 0)));
        let put = decode(&out[t.len()..]).unwrap();
        assert!(!put.tombstone && put.value.is_empty());
    }
}
