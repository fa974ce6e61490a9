//! The memtable (LevelDB's write buffer), in device DRAM: the latest put or delete of each key
//! since the last flush, ordered by key, and the bytes its records will take in an SST.
//!
//! LevelDB's memtable keeps every version with a sequence number; with no snapshots only the
//! newest survives a flush, so this one keeps the newest alone (ours: same SSTs, less memory).

use std::collections::BTreeMap;

use crate::flash::record;

#[derive(Default)]
pub struct Memtable {
    /// `None`: a deletion (written as a tombstone).
    entries: BTreeMap<Box<[u8]>, Option<Box<[u8]>>>,
    bytes: usize,
}

fn record_len(key: &[u8], value: &Option<Box<[u8]>>) -> usize {
    record::encoded_len(key.len(), value.as_ref().map_or(0, |v| v.len()))
}

impl Memtable {
    /// Bytes of its records once flushed.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Bytes after a put (`Some`) or delete (`None`) of `key` replaced what the memtable has of it.
    pub fn bytes_after(&self, key: &[u8], value: Option<&[u8]>) -> usize {
        let old = self.entries.get(key).map_or(0, |v| record_len(key, v));
        self.bytes - old + record::encoded_len(key.len(), value.map_or(0, |v| v.len()))
    }

    /// Records a put (`Some`) or delete (`None`) of `key`.
    pub fn insert(&mut self, key: &[u8], value: Option<&[u8]>) {
        let value: Option<Box<[u8]>> = value.map(Into::into);
        self.bytes += record_len(key, &value);
        if let Some(old) = self.entries.insert(key.into(), value) {
            self.bytes -= record_len(key, &old);
        }
    }

    /// What the memtable knows of `key`: `Some(None)` for a deletion, `None` for nothing.
    pub fn get(&self, key: &[u8]) -> Option<Option<&[u8]>> {
        self.entries.get(key).map(|v| v.as_deref())
    }

    /// Its records, sorted by key, as one SST's bytes, with its smallest and largest keys; the
    /// memtable stays as it is until [`Memtable::clear`] (a flush that fails keeps it).
    pub fn encode(&self) -> Option<(Vec<u8>, &[u8], &[u8])> {
        let (first, _) = self.entries.first_key_value()?;
        let (last, _) = self.entries.last_key_value()?;
        let mut out = Vec::with_capacity(self.bytes);
        for (k, v) in &self.entries {
            match v {
                Some(v) => record::encode(k, v, &mut out),
                None => record::encode_tombstone(k, &mut out),
            }
        }
        Some((out, first, last))
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_version_only_and_bytes_follow() {
        let mut m = Memtable::default();
        m.insert(b"b", Some(b"22"));
        m.insert(b"a", Some(b"1"));
        assert_eq!(m.bytes(), 9 + 8);
        assert_eq!(m.bytes_after(b"b", None), 8 + 7);
        m.insert(b"b", None);
        assert_eq!((m.bytes(), m.get(b"b"), m.get(b"a")), (15, Some(None), Some(Some(&b"1"[..]))));
        let (bytes, lo, hi) = m.encode().unwrap();
        assert_eq!((bytes.len(), lo, hi), (15, &b"a"[..], &b"b"[..]));
        let first = record::decode(&bytes).unwrap();
        assert!(!first.tombstone && record::decode(&bytes[first.len()..]).unwrap().tombstone);
        m.clear();
        assert!(m.encode().is_none() && m.bytes() == 0);
    }
}
