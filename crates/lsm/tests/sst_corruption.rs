//! Corrupt SSTs: a flipped byte in a data block, the index, the metaindex, the filter or the footer, a
//! truncated file, an unknown block type. Every one gives `Error::Corruption` naming the file and the offset
//! of the bad block (with checksums verified), and random damage never makes open, get or iteration panic.
//! A damaged filter is the exception the table's contract makes: the table opens without it.

mod sst_common;

use std::sync::Arc;

use lsm::cache::BlockCache;
use lsm::crc;
use lsm::iter::InternalIterator;
use lsm::key::{internal_key, ValueKind};
use lsm::sst::format::{Footer, FOOTER_SIZE};
use lsm::sst::Table;
use lsm::{Error, Options, ReadOptions};
use proptest::prelude::*;
use sst_common::*;
use storage::{Fs, MemFs};

fn model(n: usize) -> Entries {
    (0..n).map(|i| (ikey(&format!("key{i:06}"), 3), format!("value-{i}-{}", "x".repeat(i % 40)).into_bytes())).collect()
}

/// Builds a clean table and returns its bytes.
fn clean(opts: &Options, entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let fs = MemFs::new();
    build(&fs, "t.sst", opts, entries);
    storage::read_all(&fs, "t.sst").unwrap()
}

fn with_bytes(bytes: &[u8]) -> MemFs {
    let fs = MemFs::new();
    storage::write_all(&fs, "t.sst", bytes, true).unwrap();
    fs
}

fn assert_corruption_at<T: std::fmt::Debug>(r: lsm::Result<T>, want_offset: u64) {
    match r {
        Err(Error::Corruption { file, offset, what }) => {
            assert_eq!(file, "t.sst", "{what}");
            assert_eq!(offset, want_offset, "{what}");
        }
        other => panic!("expected corruption at {want_offset}, got {other:?}"),
    }
}

fn footer(bytes: &[u8]) -> Footer {
    Footer::decode(&bytes[bytes.len() - FOOTER_SIZE..], "t.sst", 0).unwrap()
}

#[test]
fn flipped_data_byte_is_found_by_get_and_iteration() {
    let opts = Options::default();
    let entries = model(2000);
    let bytes = clean(&opts, &entries);
    let fs = with_bytes(&bytes);
    let table = open(&fs, "t.sst", 1, &opts, None).unwrap();
    let h = table.data_block_handles()[5];
    let mut bad = bytes.clone();
    bad[h.offset as usize + 17] ^= 0x40;
    let fs = with_bytes(&bad);
    let verify = ReadOptions { verify_checksums: true, ..ReadOptions::default() };
    let table = open(&fs, "t.sst", 1, &opts, None).unwrap();
    // A key of block 5: its first entry's key is the previous block's separator successor; use the model.
    let in_block: Vec<_> = entries.iter().filter(|(k, _)| table.find_block(k) == 5).collect();
    assert!(!in_block.is_empty());
    assert_corruption_at(table.get(&in_block[0].0, &verify), h.offset);
    // Other blocks still read.
    assert_eq!(table.get(&entries[0].0, &verify).unwrap().unwrap().0, entries[0].0);
    let mut it = table.iter(&verify);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert!(n < entries.len());
    assert_corruption_at(it.status(), h.offset);
    assert!(!it.valid());

    // paranoid_checks verifies without read options, and so does a cache fill.
    let paranoid = Options { paranoid_checks: true, ..Options::default() };
    let t = open(&fs, "t.sst", 1, &paranoid, None).unwrap();
    assert_corruption_at(t.get(&in_block[0].0, &ReadOptions::default()), h.offset);
    let t = open(&fs, "t.sst", 1, &opts, Some(Arc::new(BlockCache::new(1 << 20)))).unwrap();
    assert_corruption_at(t.get(&in_block[0].0, &ReadOptions::default()), h.offset);
    // Unverified and uncached: any answer, but no panic.
    for (k, _) in &in_block {
        let _ = table.get(k, &ReadOptions::default());
    }
}

/// A damaged filter block is no reason to refuse the table (it holds no data): the table opens
/// without it, says why, and every get still finds its key in the (verified) data blocks.
#[test]
fn a_damaged_filter_block_opens_without_the_filter() {
    let opts = Options::default();
    let entries = model(1000);
    let bytes = clean(&opts, &entries);
    let table = open(&with_bytes(&bytes), "t.sst", 1, &opts, None).unwrap();
    assert!(table.has_filter() && table.filter_damage().is_none());
    let last_data = *table.data_block_handles().last().unwrap();
    let filter_offset = last_data.offset + last_data.size + 5;
    let mut bad = bytes.clone();
    bad[filter_offset as usize + 2] ^= 0x01;
    let table = open(&with_bytes(&bad), "t.sst", 1, &opts, None).unwrap();
    assert!(!table.has_filter());
    assert_corruption_at(Err::<(), _>(table.filter_damage().unwrap().clone()), filter_offset);
    let verify = ReadOptions { verify_checksums: true, ..ReadOptions::default() };
    for (k, v) in &entries {
        assert_eq!(table.get(k, &verify).unwrap().as_ref(), Some(&(k.clone(), v.clone())));
    }
    assert_eq!(table.stats().filter_checks, 0);
}

#[test]
fn damaged_index_metaindex_or_footer_fail_open() {
    let opts = Options::default();
    let bytes = clean(&opts, &model(1000));
    let f = footer(&bytes);
    for (what, at, want) in [
        ("index", f.index.offset + 3, f.index.offset),
        ("index trailer", f.index.offset + f.index.size + 2, f.index.offset),
        ("metaindex", f.metaindex.offset + 1, f.metaindex.offset),
        ("magic", bytes.len() as u64 - 3, bytes.len() as u64 - 8),
    ] {
        let mut bad = bytes.clone();
        bad[at as usize] ^= 0x01;
        let r = open(&with_bytes(&bad), "t.sst", 1, &opts, None);
        assert!(r.is_err(), "{what}");
        assert_corruption_at(r, want);
    }
    // Truncations: a short tail loses the magic; a tiny file cannot hold a footer.
    assert_corruption_at(
        open(&with_bytes(&bytes[..bytes.len() - 1]), "t.sst", 1, &opts, None),
        bytes.len() as u64 - 1 - 8,
    );
    assert_corruption_at(open(&with_bytes(&bytes[..10]), "t.sst", 1, &opts, None), 0);
    // A file size larger than the file: the footer read comes up short.
    let fs = with_bytes(&bytes);
    let file: Arc<dyn storage::RandomAccessFile> = Arc::from(storage::Fs::open(&fs, "t.sst").unwrap());
    assert_corruption_at(Table::open(file, bytes.len() as u64 + 100, 1, &opts, None), bytes.len() as u64 + 100 - 48);
}

#[test]
fn unknown_block_type_is_corruption_even_unverified() {
    let opts = Options::default();
    let bytes = clean(&opts, &model(500));
    let table = open(&with_bytes(&bytes), "t.sst", 1, &opts, None).unwrap();
    let h = table.data_block_handles()[1];
    let mut bad = bytes.clone();
    let (start, end) = (h.offset as usize, (h.offset + h.size) as usize);
    bad[end] = 1; // "snappy"
    let crc = crc::mask(crc::crc32c(&bad[start..=end]));
    bad[end + 1..end + 5].copy_from_slice(&crc.to_le_bytes());
    let table = open(&with_bytes(&bad), "t.sst", 1, &opts, None).unwrap();
    let mut it = table.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        it.next();
    }
    assert_corruption_at(it.status(), h.offset + h.size);
}

fn exercise(
    fs: &MemFs,
    opts: &Options,
    ro: &ReadOptions,
    cache: bool,
    entries: &[(Vec<u8>, Vec<u8>)],
) -> Result<(), TestCaseError> {
    let cache = cache.then(|| Arc::new(BlockCache::new(1 << 16)));
    let table = match open(fs, "t.sst", 1, opts, cache) {
        Ok(t) => t,
        Err(e) => {
            prop_assert!(e.is_corruption(), "open: {e}");
            return Ok(());
        }
    };
    let checked = ro.verify_checksums;
    let mut it = table.iter(ro);
    it.seek_to_first();
    let mut fwd = Vec::new();
    while it.valid() && fwd.len() <= entries.len() {
        fwd.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    match it.status() {
        Ok(()) if checked => prop_assert!(fwd == entries, "verified iteration returned wrong data"),
        Err(e) if checked => prop_assert!(e.is_corruption(), "{e}"),
        _ => {}
    }
    it.seek_to_last();
    let mut steps = 0;
    while it.valid() && steps <= entries.len() {
        it.prev();
        steps += 1;
    }
    for (k, v) in entries.iter().step_by(7) {
        match table.get(k, ro) {
            Ok(got) if checked => prop_assert_eq!(got, Some((k.clone(), v.clone()))),
            Err(e) if checked => prop_assert!(e.is_corruption(), "{e}"),
            _ => {}
        }
        it.seek(k);
        if it.valid() {
            let _ = (it.key(), it.value());
        }
        it.seek(&internal_key(b"key", 1, ValueKind::Value));
    }
    let _ = it.status();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_damage_never_panics_and_verified_reads_are_right_or_corrupt(
        flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 1..5),
        truncate in prop::option::weighted(0.1, any::<prop::sample::Index>()),
        align in any::<bool>(),
        restart in 1usize..8,
        cache in any::<bool>(),
    ) {
        let opts = Options { block_size: 256, block_restart_interval: restart, align_blocks: align, ..Options::default() };
        let entries = model(300);
        let mut bytes = {
            let fs = MemFs::builder().block_size(512).build();
            build(&fs, "t.sst", &opts, &entries);
            storage::read_all(&fs, "t.sst").unwrap()
        };
        for (at, x) in &flips {
            let i = at.index(bytes.len());
            bytes[i] ^= x;
        }
        if let Some(t) = truncate {
            bytes.truncate(t.index(bytes.len()));
        }
        let fs = with_bytes(&bytes);
        for verify in [true, false] {
            let ro = ReadOptions { verify_checksums: verify, ..ReadOptions::default() };
            exercise(&fs, &opts, &ro, cache, &entries)?;
        }
    }
}

#[test]
fn mapped_tables_check_each_block_the_first_time_it_is_read() {
    // PosixFs maps SSTs: blocks are shared from the mapping, not cached, and a block's CRC is
    // checked on its first read even without verify_checksums or paranoid_checks.
    let opts = Options::default();
    let entries = model(2000);
    let bytes = clean(&opts, &entries);
    let dir = tempfile::tempdir().unwrap();
    let fs = storage::PosixFs::new(dir.path()).unwrap();
    let open_mapped = |bytes: &[u8]| {
        storage::write_all(&fs, "t.sst", bytes, true).unwrap();
        let file: Arc<dyn storage::RandomAccessFile> = Arc::from(fs.open_immutable("t.sst").unwrap());
        assert!(file.read_shared(0, 1).is_some(), "PosixFs maps immutable files");
        let cache = Arc::new(BlockCache::new(1 << 20));
        (Table::open(file, bytes.len() as u64, 1, &opts, Some(Arc::clone(&cache))).unwrap(), cache)
    };
    let (table, cache) = open_mapped(&bytes);
    for (k, v) in entries.iter().step_by(7) {
        let got = table.get(k, &ReadOptions::default()).unwrap().unwrap();
        assert_eq!((&got.0, &got.1), (k, v));
    }
    assert_eq!(cache.stats().inserts, 0, "mapped blocks are not cached");

    let h = table.data_block_handles()[5];
    let mut bad = bytes.clone();
    bad[h.offset as usize + 17] ^= 0x40;
    let (table, _) = open_mapped(&bad);
    let in_block: Vec<_> = entries.iter().filter(|(k, _)| table.find_block(k) == 5).collect();
    for _ in 0..2 {
        assert_corruption_at(table.get(&in_block[0].0, &ReadOptions::default()), h.offset);
    }
    assert_eq!(table.get(&entries[0].0, &ReadOptions::default()).unwrap().unwrap().0, entries[0].0);
}
