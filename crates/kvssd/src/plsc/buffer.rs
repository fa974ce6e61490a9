//! The write buffer (device DRAM): the records of the latest puts, back to back, and the
//! KVbatchList, the kNodes of the records in it.
//!
//! Its capacity is #planes x page size: one L0 UST, one page per plane. A record never straddles
//! two USTs, so a record that does not fit in what is left of the buffer makes the device flush the
//! buffer first (the tail of its last page is left zero). A put of a key already in the buffer
//! takes the old record out (the bytes after it move up and their kNodes' Offsets shift down by
//! the old Len) and appends the new one; a delete of a buffered key takes its record out the same
//! way. So the buffer holds exactly the live records of its keys.
//!
//! The KVbatchList is kept ordered by key so that a put finds an earlier version of its key
//! without scanning; its order plays no part in the result.

use std::collections::BTreeMap;

use super::knode::{KNode, IN_BUFFER};
use crate::flash::record;

pub struct WriteBuffer {
    bytes: Vec<u8>,
    capacity: usize,
    /// KVbatchList: the kNodes of the records in `bytes`.
    batch: BTreeMap<Box<[u8]>, KNode>,
}

impl WriteBuffer {
    pub fn new(capacity: usize) -> WriteBuffer {
        WriteBuffer { bytes: Vec::with_capacity(capacity), capacity, batch: BTreeMap::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes of records in the buffer.
    pub fn used(&self) -> usize {
        self.bytes.len()
    }

    /// Bytes still free.
    pub fn free(&self) -> usize {
        self.capacity - self.bytes.len()
    }

    /// kNodes in the KVbatchList.
    pub fn knodes(&self) -> usize {
        self.batch.len()
    }

    pub fn get(&self, key: &[u8]) -> Option<&KNode> {
        self.batch.get(key)
    }

    /// The value of `key` if its record is in the buffer.
    pub fn value(&self, key: &[u8]) -> Option<&[u8]> {
        let k = self.batch.get(key)?;
        let at = k.offset as usize;
        // The buffer wrote these bytes itself; a record that does not decode is a bug here.
        record::decode(&self.bytes[at..at + k.len as usize]).ok().map(|r| r.value)
    }

    /// Appends the record of `key` and `value` (the caller made room and took out an older
    /// version of the key) and its kNode.
    pub fn append(&mut self, key: &[u8], signature: u128, value: &[u8]) {
        let offset = self.bytes.len() as u32;
        record::encode(key, value, &mut self.bytes);
        let len = self.bytes.len() as u32 - offset;
        debug_assert!(self.bytes.len() <= self.capacity, "the caller flushes before a record overflows");
        let knode = KNode { key: key.into(), signature, utid: IN_BUFFER, offset, len };
        self.batch.insert(key.into(), knode);
    }

    /// Takes the record of `key` out of the buffer: later records move up by its length and their
    /// kNodes' Offsets shift with them. Returns its kNode.
    pub fn remove(&mut self, key: &[u8]) -> Option<KNode> {
        let old = self.batch.remove(key)?;
        let (at, len) = (old.offset as usize, old.len as usize);
        self.bytes.drain(at..at + len);
        for k in self.batch.values_mut() {
            if k.offset > old.offset {
                k.offset -= old.len;
            }
        }
        Some(old)
    }

    /// The buffered bytes, for a flush; the KVbatchList stays until [`WriteBuffer::flushed`] (a
    /// flush that fails gives the bytes back with [`WriteBuffer::restore`]).
    pub fn take_bytes(&mut self) -> Vec<u8> {
        std::mem::replace(&mut self.bytes, Vec::with_capacity(self.capacity))
    }

    pub fn restore(&mut self, bytes: Vec<u8>) {
        self.bytes = bytes;
    }

    /// The flush of the taken bytes formed UST `utid`: the KVbatchList's kNodes, now pointing
    /// into it, leave the buffer (for the global index).
    pub fn flushed(&mut self, utid: u32) -> impl Iterator<Item = KNode> {
        std::mem::take(&mut self.batch).into_values().map(move |mut k| {
            k.utid = utid;
            k
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plsc::knode::signature;

    #[test]
    fn an_update_in_the_buffer_shifts_the_later_offsets() {
        let mut b = WriteBuffer::new(100);
        b.append(b"a", signature(b"a"), b"1111");
        b.append(b"b", signature(b"b"), b"22");
        b.append(b"c", signature(b"c"), b"3");
        let a_len = b.get(b"a").unwrap().len;
        let c_before = b.get(b"c").unwrap().offset;
        let old = b.remove(b"a").unwrap();
        assert_eq!((old.offset, old.len), (0, a_len));
        assert_eq!(b.get(b"b").unwrap().offset, 0);
        assert_eq!(b.get(b"c").unwrap().offset, c_before - a_len);
        b.append(b"a", signature(b"a"), b"new");
        assert_eq!(b.value(b"a").unwrap(), b"new");
        assert_eq!(b.value(b"b").unwrap(), b"22");
        assert_eq!(b.value(b"c").unwrap(), b"3");
        assert_eq!(b.used(), record::encoded_len(1, 3) + record::encoded_len(1, 2) + record::encoded_len(1, 1));
        let bytes = b.take_bytes();
        assert_eq!(bytes.len(), 10 + 9 + 8);
        let moved: Vec<KNode> = b.flushed(7).collect();
        assert_eq!(moved.len(), 3);
        assert!(moved.iter().all(|k| k.utid == 7));
        assert!(b.is_empty() && b.knodes() == 0);
    }
}
