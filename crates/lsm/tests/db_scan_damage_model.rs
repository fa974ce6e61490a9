//! Property test: random blocks (data, index, filter, metaindex) of random SSTs of a database with
//! several levels are damaged, one byte each; then every scan (forward from anywhere, backward from
//! the end) and every get either matches the model (a BTreeMap of the acknowledged writes) up to
//! where it stops, or fails with a corruption naming a damaged file. Nothing wrong is ever
//! returned before an error. Checked with the default read options (blocks verified as they
//! enter the block cache) and with `verify_checksums` on and the cache bypassed.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::Arc;

use lsm::sst::format::{Footer, BLOCK_TRAILER_SIZE, FOOTER_SIZE};
use lsm::{Db, Error, Options, ReadOptions, WriteOptions};
use proptest::prelude::*;
use proptest::sample::Index;
use storage::{Env, Fs, MemFs};

mod sst_common;
use sst_common::handles;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const KEYS: u16 = 300;

fn options() -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 1 << 20,
        max_file_size: 4 << 10,
        max_bytes_for_level_base: 16 << 10,
        block_size: 256,
        block_cache_bytes: 64 << 10,
        ..Options::default()
    }
}

fn key(k: u16) -> Vec<u8> {
    format!("key{k:04}").into_bytes()
}

fn value(k: u16, serial: usize, len: u8) -> Vec<u8> {
    let mut v = format!("v{serial}-{k}-").into_bytes();
    v.resize(v.len() + len as usize, b'a' + (serial % 26) as u8);
    v
}

/// A round of writes: (key, None for a delete or Some(value length)).
type Round = Vec<(u16, Option<u8>)>;

fn rounds() -> impl Strategy<Value = Vec<(Round, bool)>> {
    let write = (0..KEYS, prop::option::weighted(0.8, any::<u8>()));
    prop::collection::vec((prop::collection::vec(write, 20..250), prop::bool::weighted(0.3)), 2..6)
}

/// Which block of which SST, and which of its bytes (the trailer's included).
#[derive(Clone, Debug)]
struct Damage {
    file: Index,
    kind: u8,
    block: Index,
    byte: Index,
}

fn damage() -> impl Strategy<Value = Damage> {
    (any::<Index>(), 0u8..8, any::<Index>(), any::<Index>()).prop_map(|(file, kind, block, byte)| Damage {
        file,
        kind,
        block,
        byte,
    })
}

/// Writes `rounds` (each flushed, some compacted down whole) and returns the closed database
/// and its contents.
fn build(rounds: &[(Round, bool)]) -> (MemFs, Model) {
    let mem = MemFs::new();
    let db = Db::open(Env::new(Arc::new(mem.clone())), "db", options()).unwrap();
    let mut model = Model::new();
    let w = WriteOptions::default();
    let mut serial = 0;
    for (writes, compact) in rounds {
        for &(k, v) in writes {
            serial += 1;
            match v {
                Some(len) => {
                    db.put(&w, &key(k), &value(k, serial, len)).unwrap();
                    model.insert(key(k), value(k, serial, len));
                }
                None => {
                    db.delete(&w, &key(k)).unwrap();
                    model.remove(&key(k));
                }
            }
        }
        db.flush().unwrap();
        if *compact {
            db.compact_range(None, None).unwrap();
        }
        db.wait_for_background().unwrap();
    }
    db.close().unwrap();
    (mem, model)
}

/// Where `d` flips a bit, picked in the undamaged files: (file, offset, bit).
fn locate(fs: &MemFs, d: &Damage) -> (String, usize, u32) {
    let mut tables: Vec<String> =
        fs.list("db").unwrap().into_iter().filter(|n| n.ends_with(".ldb")).map(|n| format!("db/{n}")).collect();
    tables.sort();
    let path = d.file.get(&tables).clone();
    let bytes = storage::read_all(fs, &path).unwrap();
    let footer = Footer::decode(&bytes[bytes.len() - FOOTER_SIZE..], &path, 0).unwrap();
    let meta = handles(&bytes, &path, &footer.metaindex);
    let filter = meta.iter().find(|(k, _)| k.starts_with(b"filter.")).map(|(_, h)| *h);
    let block = match (d.kind, filter) {
        (0..=3, _) | (5, None) => d.block.get(&handles(&bytes, &path, &footer.index)).1,
        (4, _) => footer.index,
        (5, Some(f)) => f,
        _ => footer.metaindex,
    };
    let at = block.offset as usize + d.byte.index(block.size as usize + BLOCK_TRAILER_SIZE);
    (path, at, d.byte.index(8) as u32)
}

/// Flips the bits `damages` pick; returns the damaged files.
fn apply(fs: &MemFs, damages: &[Damage]) -> BTreeSet<String> {
    let flips: Vec<_> = damages.iter().map(|d| locate(fs, d)).collect();
    for (path, at, bit) in &flips {
        let mut bytes = storage::read_all(fs, path).unwrap();
        bytes[*at] ^= 1 << bit;
        storage::write_all(fs, path, &bytes, true).unwrap();
    }
    flips.into_iter().map(|(path, _, _)| path).collect()
}

/// `e` is a corruption naming one of the `damaged` files.
fn names_damaged(e: &Error, damaged: &BTreeSet<String>) -> Result<(), TestCaseError> {
    let text = e.to_string();
    prop_assert!(e.is_corruption() && damaged.iter().any(|f| text.contains(f.as_str())), "{text}; damaged {damaged:?}");
    Ok(())
}

/// What `items` yielded must be `expected`'s start; an error must name a damaged file; without
/// one, all of `expected` must have come.
fn check_prefix<'a>(
    what: &str,
    items: impl Iterator<Item = lsm::Result<(Vec<u8>, Vec<u8>)>>,
    expected: impl Iterator<Item = (&'a Vec<u8>, &'a Vec<u8>)>,
    damaged: &BTreeSet<String>,
) -> Result<(), TestCaseError> {
    let mut expected = expected;
    for item in items {
        match item {
            Ok((k, v)) => {
                let want = expected.next();
                prop_assert!(
                    want == Some((&k, &v)),
                    "{what}: yielded {:?} where the model has {:?}",
                    String::from_utf8_lossy(&k),
                    want.map(|(k, _)| String::from_utf8_lossy(k))
                );
            }
            Err(e) => return names_damaged(&e, damaged),
        }
    }
    prop_assert!(expected.next().is_none(), "{what}: ended early without an error");
    Ok(())
}

/// Every check, with read options `ro`.
fn check_all(
    db: &Db,
    model: &Model,
    damaged: &BTreeSet<String>,
    ro: &ReadOptions,
    starts: &[u16],
) -> Result<(), TestCaseError> {
    // A level-0 SST that cannot be opened fails a scan before it starts.
    let mut starts: Vec<Option<u16>> = starts.iter().copied().map(Some).collect();
    starts.push(None);
    for s in starts {
        let from = key(s.unwrap_or(0));
        let bound = s.map_or(Bound::Unbounded, |_| Bound::Included(&from[..]));
        match db.scan(ro, bound, Bound::Unbounded) {
            Ok(scan) => check_prefix(&format!("scan from {s:?}"), scan, model.range(from.clone()..), damaged)?,
            Err(e) => names_damaged(&e, damaged)?,
        }
    }
    let mut it = match db.iter(ro) {
        Ok(it) => it,
        Err(e) => return names_damaged(&e, damaged).and_then(|()| check_gets(db, model, damaged, ro)),
    };
    it.seek_to_last();
    let backward = std::iter::from_fn(|| {
        if it.valid() {
            let kv = (it.key().to_vec(), it.value().to_vec());
            it.prev();
            Some(Ok(kv))
        } else {
            it.status().err().map(Err)
        }
    });
    // `status()` keeps the error: yield it once.
    let mut failed = false;
    let backward = backward.take_while(|r| {
        let go = !failed;
        failed |= r.is_err();
        go
    });
    check_prefix("backward walk", backward, model.iter().rev(), damaged)?;
    check_gets(db, model, damaged, ro)
}

/// Every get answers as the model does or fails naming a damaged file.
fn check_gets(db: &Db, model: &Model, damaged: &BTreeSet<String>, ro: &ReadOptions) -> Result<(), TestCaseError> {
    for k in 0..KEYS {
        match db.get(ro, &key(k)) {
            Ok(v) => prop_assert_eq!(v.as_ref(), model.get(&key(k)), "get {}", k),
            Err(e) => names_damaged(&e, damaged)?,
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn scans_and_gets_over_damaged_blocks_match_the_model_until_they_fail(
        rounds in rounds(),
        damages in prop::collection::vec(damage(), 1..4),
        starts in prop::collection::vec(0..KEYS, 1..5),
    ) {
        let (mem, model) = build(&rounds);
        let damaged = apply(&mem, &damages);
        let db = Db::open(Env::new(Arc::new(mem.clone())), "db", options()).unwrap();
        check_all(&db, &model, &damaged, &ReadOptions::default(), &starts)?;
        let verified = ReadOptions { verify_checksums: true, fill_cache_disabled: true, ..ReadOptions::default() };
        check_all(&db, &model, &damaged, &verified, &starts)?;
    }
}
