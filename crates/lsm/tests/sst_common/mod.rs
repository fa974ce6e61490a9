//! Helpers shared by the SST tests: building tables on a MemFs and a sorted model to compare with.
#![allow(dead_code)]

use std::cmp::Ordering;
use std::sync::Arc;

use lsm::cache::BlockCache;
use lsm::iter::InternalIterator;
use lsm::key::{compare_internal, internal_key, ValueKind};
use lsm::sst::{Block, BlockHandle, Table, TableBuilder, TableProperties};
use lsm::{Options, ReadOptions};
use storage::{Fs, MemFs};

pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Sorts (internal key, value) pairs in table order and drops duplicate keys.
pub fn sorted(mut entries: Entries) -> Entries {
    entries.sort_by(|a, b| compare_internal(&a.0, &b.0));
    entries.dedup_by(|a, b| compare_internal(&a.0, &b.0) == Ordering::Equal);
    entries
}

pub fn ikey(user: &str, seq: u64) -> Vec<u8> {
    internal_key(user.as_bytes(), seq, ValueKind::Value)
}

/// Builds `path` on `fs` from `entries` (already sorted) and syncs it.
pub fn build(fs: &MemFs, path: &str, opts: &Options, entries: &[(Vec<u8>, Vec<u8>)]) -> TableProperties {
    let file = fs.create(path).unwrap();
    let mut b = TableBuilder::new(opts, file, fs.block_size());
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    let props = b.finish().unwrap();
    b.file_mut().sync().unwrap();
    assert_eq!(props.file_size, fs.file_size(path).unwrap());
    props
}

pub fn open(
    fs: &MemFs,
    path: &str,
    number: u64,
    opts: &Options,
    cache: Option<Arc<BlockCache>>,
) -> lsm::Result<Arc<Table>> {
    let file: Arc<dyn storage::RandomAccessFile> = Arc::from(fs.open(path)?);
    let size = fs.file_size(path)?;
    Table::open(file, size, number, opts, cache)
}

/// Index of the first model entry >= `target`.
pub fn lower_bound(model: &[(Vec<u8>, Vec<u8>)], target: &[u8]) -> usize {
    model.partition_point(|(k, _)| compare_internal(k, target) == Ordering::Less)
}

/// Everything the iterator yields forward, then backward (reversed back), checked against `model`.
pub fn check_iteration(table: &Arc<Table>, ro: &ReadOptions, model: &[(Vec<u8>, Vec<u8>)]) {
    let mut it = table.iter(ro);
    it.seek_to_first();
    let mut fwd = Vec::new();
    while it.valid() {
        fwd.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    assert_eq!(fwd.len(), model.len());
    assert!(fwd == model, "forward iteration differs from the model");
    it.seek_to_last();
    let mut back = Vec::new();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    back.reverse();
    assert!(back == model, "backward iteration differs from the model");
}

/// Every key found by `get`, and `seek` to each key and just past it lands where the model says.
pub fn check_lookups(table: &Arc<Table>, ro: &ReadOptions, model: &[(Vec<u8>, Vec<u8>)]) {
    for (k, v) in model {
        let got = table.get(k, ro).unwrap();
        assert_eq!(got.as_ref(), Some(&(k.clone(), v.clone())));
    }
    let mut it = table.iter(ro);
    for (i, (k, _)) in model.iter().enumerate() {
        it.seek(k);
        assert!(it.valid());
        assert_eq!(it.key(), &k[..]);
        // Stepping back from a seek lands on the previous entry.
        it.prev();
        match i.checked_sub(1) {
            Some(j) => assert_eq!(it.key(), &model[j].0[..]),
            None => assert!(!it.valid()),
        }
    }
    it.status().unwrap();
}

/// The entries of the index-like block at `h` of a table's `bytes` (an index or a metaindex):
/// each key with the block handle it points to.
pub fn handles(bytes: &[u8], path: &str, h: &BlockHandle) -> Vec<(Vec<u8>, BlockHandle)> {
    let block = Block::new(bytes[h.offset as usize..(h.offset + h.size) as usize].to_vec(), path, h.offset).unwrap();
    let mut it = block.iter();
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), BlockHandle::decode(it.value()).unwrap().0));
        it.next();
    }
    out
}
