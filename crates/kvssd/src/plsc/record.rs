//! The on-flash record of one KV pair, written by the "string-byte converter": `klen` (u16, little
//! endian) | key | `vlen` (u32, little endian) | value.
//!
//! The seed does not give a format; a record must hold its key because compaction rebuilds the KV
//! pairs of a victim UST from its pages alone. Records are appended back to back inside a UST and may
//! straddle its pages; a kNode's `Offset` and `Len` are the byte address and length of the whole
//! record (header included), so the invalid bytes of a UST plus its live records' bytes are its
//! used bytes.

/// Bytes of a record that are not key or value: `klen` and `vlen`.
pub const HEADER: usize = 2 + 4;

/// Bytes of the record of a key of `klen` bytes and a value of `vlen` bytes.
pub fn encoded_len(klen: usize, vlen: usize) -> usize {
    HEADER + klen + vlen
}

/// Appends the record of `key` and `value` to `out`. The caller checked that the key fits a u16
/// and the value a u32 (the device's size limits are below both).
pub fn encode(key: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(key.len() as u16).to_le_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as u32).to_le_bytes());
    out.extend_from_slice(value);
}

/// One decoded record, borrowing the bytes it was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
}

impl Record<'_> {
    /// Bytes of this record on flash.
    pub fn len(&self) -> usize {
        encoded_len(self.key.len(), self.value.len())
    }
}

/// Decodes the record at the start of `bytes`. Fails, saying why, when the bytes end inside the
/// record or its key is empty (no record has one: an empty key is refused at the interface).
pub fn decode(bytes: &[u8]) -> Result<Record<'_>, String> {
    let klen = match bytes.get(..2) {
        Some(b) => u16::from_le_bytes([b[0], b[1]]) as usize,
        None => return Err(format!("{} bytes left, a record header needs {HEADER}", bytes.len())),
    };
    if klen == 0 {
        return Err("key length 0".into());
    }
    let vlen_at = 2 + klen;
    let vlen = match bytes.get(vlen_at..vlen_at + 4) {
        Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
        None => return Err(format!("key of {klen} bytes runs past the {} bytes left", bytes.len())),
    };
    let value_at = vlen_at + 4;
    let value = bytes
        .get(value_at..value_at + vlen)
        .ok_or_else(|| format!("value of {vlen} bytes runs past the {} bytes left", bytes.len()))?;
    Ok(Record { key: &bytes[2..vlen_at], value })
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
        assert_eq!((first.key, first.value), (&b"key"[..], &b"value"[..]));
        let second = decode(&out[first.len()..]).unwrap();
        assert_eq!((second.key, second.value), (&b"k2"[..], &b""[..]));
        assert!(decode(&out[..out.len() - 1]).is_ok(), "the first record is whole");
        assert!(decode(&out[first.len()..out.len() - 1]).unwrap_err().contains("past"));
        assert!(decode(&[0, 0, 0]).unwrap_err().contains("key length 0"));
    }
}
