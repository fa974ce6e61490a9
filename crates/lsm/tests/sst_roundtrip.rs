//! Round trips of random sorted key/value sets through TableBuilder and Table, against a sorted model.

mod sst_common;

use std::sync::Arc;

use lsm::cache::BlockCache;
use lsm::iter::InternalIterator;
use lsm::key::{internal_key, user_key, ValueKind};
use lsm::{Error, Options, ReadOptions};
use proptest::prelude::*;
use sst_common::*;
use storage::MemFs;

fn entries_strategy(max: usize) -> impl Strategy<Value = Entries> {
    let user = prop::collection::vec(0u8..4, 0..10).prop_map(|v| v.iter().map(|b| b'a' + b).collect::<Vec<u8>>());
    let entry = (user, 0u64..50, any::<bool>(), 0usize..300, any::<u8>());
    prop::collection::vec(entry, 0..max).prop_map(|raw| {
        sorted(
            raw.into_iter()
                .map(|(u, seq, del, vlen, fill)| {
                    let kind = if del { ValueKind::Deletion } else { ValueKind::Value };
                    let value = (0..vlen).map(|i| fill.wrapping_add(i as u8)).collect();
                    (internal_key(&u, seq, kind), value)
                })
                .collect(),
        )
    })
}

fn options_strategy() -> impl Strategy<Value = Options> {
    (
        prop::sample::select(vec![64usize, 256, 1024, 4096]),
        1usize..20,
        prop::option::of(1u32..16),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(block_size, restart, bloom, align, paranoid)| Options {
            block_size,
            block_restart_interval: restart,
            bloom_bits_per_key: bloom,
            align_blocks: align,
            paranoid_checks: paranoid,
            ..Options::default()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_tables_read_back(
        model in entries_strategy(1500),
        opts in options_strategy(),
        use_cache in any::<bool>(),
        verify in any::<bool>(),
        targets in prop::collection::vec((prop::collection::vec(b'a'..b'f', 0..11), 0u64..60), 0..200),
    ) {
        let fs = MemFs::builder().block_size(if opts.align_blocks { 512 } else { 4096 }).build();
        let props = build(&fs, "t.sst", &opts, &model);
        prop_assert_eq!(props.num_entries, model.len() as u64);
        if let (Some(first), Some(last)) = (model.first(), model.last()) {
            prop_assert_eq!(&props.smallest_key, &first.0);
            prop_assert_eq!(&props.largest_key, &last.0);
        }
        let cache = use_cache.then(|| Arc::new(BlockCache::new(64 << 10)));
        let table = open(&fs, "t.sst", 7, &opts, cache).unwrap();
        prop_assert_eq!(table.num_data_blocks() as u64, props.num_data_blocks);
        if opts.align_blocks {
            for h in table.data_block_handles() {
                prop_assert_eq!(h.offset % 512, 0);
            }
        }
        let ro = ReadOptions { verify_checksums: verify, ..ReadOptions::default() };
        check_iteration(&table, &ro, &model);
        check_lookups(&table, &ro, &model);

        let mut it = table.iter(&ro);
        for (u, seq) in &targets {
            let target = internal_key(u, *seq, ValueKind::Value);
            let want = model.get(lower_bound(&model, &target));
            it.seek(&target);
            let at = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
            prop_assert_eq!(at.as_ref(), want);
            // Point lookups: whatever comes back is the model's answer, and a present user key is never
            // missed (no false negatives from the filter).
            let got = table.get(&target, &ro).unwrap();
            if let Some(g) = &got {
                prop_assert_eq!(Some(g), want);
            }
            if want.is_some_and(|(k, _)| user_key(k) == &u[..]) {
                prop_assert!(got.is_some());
            }
            let off = table.approximate_offset_of(&target);
            prop_assert!(off <= props.file_size);
        }
        it.status().unwrap();
    }
}

#[test]
fn empty_table_reads_as_empty() {
    let fs = MemFs::new();
    let opts = Options::default();
    let props = build(&fs, "e.sst", &opts, &[]);
    assert_eq!((props.num_entries, props.num_data_blocks), (0, 0));
    let table = open(&fs, "e.sst", 1, &opts, None).unwrap();
    let ro = ReadOptions::default();
    check_iteration(&table, &ro, &[]);
    assert_eq!(table.get(&ikey("a", 1), &ro).unwrap(), None);
    let mut it = table.iter(&ro);
    it.seek(&ikey("a", 1));
    assert!(!it.valid());
    assert!(it.current_block().is_none());
}

#[test]
fn out_of_order_keys_and_short_keys_are_refused() {
    let fs = MemFs::new();
    let mut b = lsm::sst::TableBuilder::new(&Options::default(), storage::Fs::create(&fs, "o.sst").unwrap(), 4096);
    b.add(&ikey("b", 5), b"1").unwrap();
    // Before, equal to, and (same user key, newer sequence) before the last key.
    for bad in [ikey("a", 9), ikey("b", 5), ikey("b", 6)] {
        match b.add(&bad, b"x") {
            Err(Error::KeysOutOfOrder { key, previous }) => assert_eq!((key, previous), (bad, ikey("b", 5))),
            other => panic!("expected KeysOutOfOrder, got {other:?}"),
        }
    }
    assert!(matches!(b.add(b"short", b"x"), Err(Error::NotInternalKey { len: 5 })));
    b.add(&ikey("b", 4), b"2").unwrap();
    assert_eq!(b.num_entries(), 2);
}

#[test]
fn a_finished_or_abandoned_builder_refuses_more() {
    let fs = MemFs::new();
    let mut b = lsm::sst::TableBuilder::new(&Options::default(), storage::Fs::create(&fs, "f.sst").unwrap(), 4096);
    b.add(&ikey("b", 5), b"1").unwrap();
    b.finish().unwrap();
    assert!(matches!(b.add(&ikey("c", 1), b"x"), Err(Error::TableBuilderClosed)));
    assert!(matches!(b.finish(), Err(Error::TableBuilderClosed)));
    let mut a = lsm::sst::TableBuilder::new(&Options::default(), storage::Fs::create(&fs, "a.sst").unwrap(), 4096);
    a.abandon();
    assert!(matches!(a.add(&ikey("c", 1), b"x"), Err(Error::TableBuilderClosed)));
}

#[test]
fn an_entry_a_block_cannot_address_is_refused() {
    let fs = MemFs::new();
    let mut b = lsm::sst::TableBuilder::new(&Options::default(), storage::Fs::create(&fs, "big.sst").unwrap(), 4096);
    let limit = (u32::MAX / 2) as usize;
    // Zeroed pages are mapped lazily: the value is never touched, so it costs no memory.
    let value = vec![0u8; limit - 8];
    let key = ikey("k", 1);
    match b.add(&key, &value) {
        Err(Error::EntryTooLarge { key_len, value_len, limit: l }) => {
            assert_eq!((key_len, value_len, l), (key.len(), limit - 8, limit));
        }
        other => panic!("expected EntryTooLarge, got {other:?}"),
    }
    assert_eq!(b.num_entries(), 0);
}

#[test]
fn a_block_index_past_the_last_is_refused() {
    let fs = MemFs::new();
    let opts = Options { block_size: 256, ..Options::default() };
    let model: Entries = (0..200).map(|i| (ikey(&format!("k{i:04}"), 1), vec![7u8; 50])).collect();
    build(&fs, "n.sst", &opts, &model);
    let table = open(&fs, "n.sst", 1, &opts, None).unwrap();
    let blocks = table.data_block_handles().len();
    let ro = ReadOptions::default();
    table.data_block(blocks - 1, &ro).unwrap();
    match table.data_block(blocks, &ro) {
        Err(Error::NoSuchBlock { file, block, blocks: n }) => {
            assert_eq!((file.as_str(), block, n), ("n.sst", blocks, blocks))
        }
        other => panic!("expected NoSuchBlock, got {other:?}"),
    }
}

#[test]
fn iterator_reports_its_block_and_cache_serves_repeats() {
    let fs = MemFs::new();
    let opts = Options { block_size: 512, ..Options::default() };
    let model: Entries = (0..2000).map(|i| (ikey(&format!("key{i:06}"), 1), vec![b'v'; 40])).collect();
    build(&fs, "c.sst", &opts, &model);
    let cache = Arc::new(BlockCache::new(1 << 20));
    let table = open(&fs, "c.sst", 3, &opts, Some(cache.clone())).unwrap();
    let handles = table.data_block_handles();
    assert!(handles.len() > 10);
    let ro = ReadOptions::default();
    let mut it = table.iter(&ro);
    it.seek_to_first();
    let mut last_block = None;
    let mut seen = 0;
    while it.valid() {
        let (i, h) = it.current_block().unwrap();
        assert_eq!(h, handles[i]);
        if last_block != Some(i) {
            assert_eq!(last_block.map_or(0, |b| b + 1), i, "blocks come in order");
            assert_eq!(it.current_data_block().unwrap().offset(), h.offset);
            last_block = Some(i);
        }
        seen += 1;
        it.next();
    }
    assert_eq!(seen, model.len());
    assert_eq!(last_block, Some(handles.len() - 1));
    let misses = cache.stats().misses;
    assert_eq!(misses as usize, handles.len());
    check_iteration(&table, &ro, &model);
    assert_eq!(cache.stats().misses, misses, "second pass is served by the cache");
    assert!(cache.stats().hits >= handles.len() as u64);
    assert_eq!(table.stats().block_reads as usize, handles.len());

    // Shared between threads.
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let table = table.clone();
            let model = model.clone();
            std::thread::spawn(move || {
                for (k, v) in model.iter().skip(t).step_by(4) {
                    assert_eq!(table.get(k, &ReadOptions::default()).unwrap(), Some((k.clone(), v.clone())));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
}
