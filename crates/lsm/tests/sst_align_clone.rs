//! Aligned data blocks (every block at a multiple of the file system's block size, padded) and cloned
//! blocks (RemapCom): an SST B that mixes added entries and blocks cloned from an aligned SST A reads back
//! exactly, and the cloned bytes are shared, not written.

mod sst_common;

use lsm::iter::InternalIterator;
use lsm::key::user_key;
use lsm::sst::block_builder::BlockBuilder;
use lsm::sst::{Block, BlockHandle, BlockKeys, TableBuilder};
use lsm::{CloneProblem, Error, FilterLayout, Options, ReadOptions};
use sst_common::*;
use storage::{Fs, MemFs};

fn aligned() -> Options {
    Options { align_blocks: true, ..Options::default() }
}

fn value(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 31 + j) as u8).collect()
}

fn round_up(v: u64, p: u64) -> u64 {
    v.div_ceil(p) * p
}

#[test]
fn small_entries_fill_exactly_one_page_each() {
    let fs = MemFs::new();
    let model: Entries = (0..3000).map(|i| (ikey(&format!("key{i:08}"), 9), value(i, 100))).collect();
    let entry_max = model[0].0.len() + 100 + 3;
    let props = build(&fs, "a.sst", &aligned(), &model);
    let table = open(&fs, "a.sst", 1, &aligned(), None).unwrap();
    let handles = table.data_block_handles();
    assert!(handles.len() > 50);
    for (i, h) in handles.iter().enumerate() {
        assert_eq!(h.offset, 4096 * i as u64, "block {i} starts on its own page");
        assert!(h.size + 5 <= 4096, "block {i} fits its page");
        if i + 1 < handles.len() {
            assert!(h.size as usize + 5 + entry_max + 4 > 4096, "block {i} was closed before it was full");
        }
    }
    assert_eq!(props.num_data_blocks, handles.len() as u64);
    assert_eq!(props.data_bytes + props.padding_bytes, 4096 * handles.len() as u64);
    let ro = ReadOptions::default();
    check_iteration(&table, &ro, &model);
    check_lookups(&table, &ro, &model);
}

#[test]
fn large_entries_span_pages_and_the_next_block_is_aligned() {
    for (page, block_size) in [(4096u64, 4096usize), (16384, 4096), (4096, 8192)] {
        let fs = MemFs::builder().block_size(page).build();
        let opts = Options { block_size, ..aligned() };
        let model: Entries = (0..400)
            .map(|i| {
                let len = if i % 37 == 5 { 10_000 } else { 150 + i % 50 };
                (ikey(&format!("k{i:05}"), 3), value(i, len))
            })
            .collect();
        let props = build(&fs, "l.sst", &opts, &model);
        let table = open(&fs, "l.sst", 1, &opts, None).unwrap();
        let handles = table.data_block_handles();
        let limit = round_up(block_size as u64, page);
        for (i, h) in handles.iter().enumerate() {
            assert_eq!(h.offset % page, 0, "page {page}: block {i} aligned");
            let span = round_up(h.size + 5, page);
            if h.size + 5 > limit {
                // Only a block whose first entry is large may pass the target; it then stays within
                // the pages that entry needed.
                let first = table.data_block(i, &ReadOptions::default()).unwrap();
                let mut it = first.iter();
                lsm::iter::InternalIterator::seek_to_first(&mut it);
                let first_len = lsm::iter::InternalIterator::value(&it).len() as u64;
                assert!(first_len >= 10_000, "page {page}: block {i} is oversized without a large entry");
            }
            let next = handles.get(i + 1).map_or(u64::MAX, |n| n.offset);
            if next != u64::MAX {
                assert_eq!(next, h.offset + span, "page {page}: block {i} padded to its pages exactly");
            }
        }
        assert_eq!(
            props.data_bytes + props.padding_bytes,
            handles.iter().map(|h| round_up(h.size + 5, page)).sum::<u64>()
        );
        check_iteration(&table, &ReadOptions::default(), &model);
        check_lookups(&table, &ReadOptions::default(), &model);
    }
}

#[test]
fn unaligned_blocks_follow_leveldb_rule() {
    let fs = MemFs::new();
    let opts = Options { block_size: 1024, ..Options::default() };
    let model: Entries = (0..2000).map(|i| (ikey(&format!("key{i:08}"), 1), value(i, 20 + i % 90))).collect();
    let props = build(&fs, "u.sst", &opts, &model);
    assert_eq!(props.padding_bytes, 0);
    let table = open(&fs, "u.sst", 1, &opts, None).unwrap();
    let handles = table.data_block_handles();
    let mut expect_offset = 0;
    for (i, h) in handles.iter().enumerate() {
        assert_eq!(h.offset, expect_offset, "blocks are packed back to back");
        expect_offset = h.offset + h.size + 5;
        if i + 1 < handles.len() {
            assert!(h.size >= 1024 && h.size < 1024 + 140, "block {i} of {} bytes", h.size);
        }
    }
}

/// A's keys: even numbers; its blocks are cloned or re-added (with odd keys interleaved) into B.
fn build_a(fs: &MemFs) -> Entries {
    let model: Entries = (0..2400).step_by(2).map(|i| (ikey(&format!("k{i:06}"), 100), value(i, 100))).collect();
    build(fs, "a.sst", &aligned(), &model);
    model
}

fn clone_into_b(fs: &MemFs, cloned: &[usize]) -> (Entries, u64, lsm::sst::TableProperties) {
    let a_model = build_a(fs);
    let a = open(fs, "a.sst", 1, &aligned(), None).unwrap();
    let ro = ReadOptions::default();
    let handles = a.data_block_handles();
    assert!(handles.len() > 8);
    let before = fs.stats();
    let mut b = TableBuilder::new(&aligned(), fs.create("b.sst").unwrap(), fs.block_size());
    let mut model = Entries::new();
    let mut cloned_len = 0;
    let mut a_entries = a_model.iter().peekable();
    for (i, h) in handles.iter().enumerate() {
        let block = a.data_block(i, &ro).unwrap();
        let mut n = 0;
        let mut keys = Vec::new();
        while let Some((k, v)) = a_entries.peek() {
            if h.offset + 4096 <= a.approximate_offset_of(k) {
                break;
            }
            keys.push((k.clone(), v.clone()));
            a_entries.next();
            n += 1;
        }
        assert!(n > 0);
        if cloned.contains(&i) {
            let outcome = clone_block(&mut b, "a.sst", *h, &block).unwrap();
            assert_eq!(outcome.total(), 4096);
            cloned_len += outcome.total();
            model.extend(keys);
            assert!(b.current_block_is_empty());
        } else {
            for (k, v) in keys {
                let num: usize = std::str::from_utf8(&user_key(&k)[1..]).unwrap().parse().unwrap();
                b.add(&k, &v).unwrap();
                let odd = (ikey(&format!("k{:06}", num + 1), 7), value(num + 1, 60));
                b.add(&odd.0, &odd.1).unwrap();
                model.push((k, v));
                model.push(odd);
            }
        }
    }
    assert!(a_entries.next().is_none());
    let props = b.finish().unwrap();
    b.file_mut().sync().unwrap();
    let after = fs.stats();
    assert_eq!(after.bytes_cloned - before.bytes_cloned, cloned_len);
    assert_eq!(
        after.bytes_written - before.bytes_written,
        props.file_size - cloned_len,
        "cloned bytes were not written"
    );
    (model, cloned_len, props)
}

#[test]
fn cloned_blocks_read_back_and_are_not_rewritten() {
    let fs = MemFs::new();
    // First block, a run of consecutive blocks, and the last block of A are cloned.
    let a_blocks = {
        build_a(&fs);
        open(&fs, "a.sst", 1, &aligned(), None).unwrap().num_data_blocks()
    };
    let cloned = vec![0, 3, 4, 5, 8, a_blocks - 1];
    let (model, cloned_len, props) = clone_into_b(&fs, &cloned);
    assert_eq!(cloned_len, 4096 * cloned.len() as u64);
    assert_eq!(props.cloned_blocks, cloned.len() as u64);
    assert_eq!(props.cloned_bytes, cloned_len);
    assert_eq!(props.num_entries, model.len() as u64);
    let b = open(&fs, "b.sst", 2, &aligned(), None).unwrap();
    assert!(b.has_filter());
    for h in b.data_block_handles() {
        assert_eq!(h.offset % 4096, 0);
    }
    let ro = ReadOptions { verify_checksums: true, ..ReadOptions::default() };
    check_iteration(&b, &ro, &model);
    // Every key, cloned ones included, passes B's filter (get consults it first).
    check_lookups(&b, &ro, &model);
    assert_eq!(b.stats().filter_skips, 0);
    // Absent keys between A's keys are mostly skipped by the filter, also inside cloned blocks.
    for i in 0..2400 {
        let _ = b.get(&ikey(&format!("k{i:06}x"), 1), &ro).unwrap();
    }
    assert!(b.stats().filter_skips > 2000, "{:?}", b.stats());
}

#[test]
fn clone_falls_back_to_copy_where_sharing_is_unsupported() {
    let fs = MemFs::builder().clone_support(false).build();
    build_a(&fs);
    let a = open(&fs, "a.sst", 1, &aligned(), None).unwrap();
    let ro = ReadOptions::default();
    let mut b = TableBuilder::new(&aligned(), fs.create("b.sst").unwrap(), 4096);
    let h = a.data_block_handles()[2];
    let outcome = clone_block(&mut b, "a.sst", h, &a.data_block(2, &ro).unwrap()).unwrap();
    assert_eq!((outcome.cloned_bytes, outcome.copied_bytes), (0, 4096));
    let props = b.finish().unwrap();
    assert_eq!(props.copied_bytes, 4096);
    b.file_mut().sync().unwrap();
    let bt = open(&fs, "b.sst", 2, &aligned(), None).unwrap();
    let mut want = Vec::new();
    let mut it = a.iter(&ro);
    lsm::iter::InternalIterator::seek_to_first(&mut it);
    while lsm::iter::InternalIterator::valid(&it) {
        if it.current_block().unwrap().0 == 2 {
            want.push((
                lsm::iter::InternalIterator::key(&it).to_vec(),
                lsm::iter::InternalIterator::value(&it).to_vec(),
            ));
        }
        lsm::iter::InternalIterator::next(&mut it);
    }
    check_iteration(&bt, &ro, &want);
}

#[test]
fn clone_misuse_is_refused_without_writing() {
    let fs = MemFs::new();
    build_a(&fs);
    let a = open(&fs, "a.sst", 1, &aligned(), None).unwrap();
    let ro = ReadOptions::default();
    let h = a.data_block_handles()[3];
    let block = a.data_block(3, &ro).unwrap();

    let mut plain = TableBuilder::new(&Options::default(), fs.create("p.sst").unwrap(), 4096);
    let refused = |r: lsm::Result<_>| match r {
        Err(Error::BadClonedBlock { file, offset, problem }) => (file, offset, problem),
        other => panic!("expected BadClonedBlock, got {other:?}"),
    };
    let (file, offset, problem) = refused(clone_block(&mut plain, "a.sst", h, &block));
    assert_eq!((file.as_str(), offset, problem), ("a.sst", h.offset, CloneProblem::TableNotAligned));

    let mut b = TableBuilder::new(&aligned(), fs.create("b.sst").unwrap(), 4096);
    b.add(&ikey("k999999", 1), b"late").unwrap();
    let before = fs.stats();
    match clone_block(&mut b, "a.sst", h, &block) {
        Err(Error::KeysOutOfOrder { key, previous }) => {
            assert_eq!(key, first_key(&block));
            assert_eq!(previous, ikey("k999999", 1));
        }
        other => panic!("out of order: expected KeysOutOfOrder, got {other:?}"),
    }
    let moved = BlockHandle::new(h.offset + 1, h.size);
    assert_eq!(refused(clone_block(&mut b, "a.sst", moved, &block)).2, CloneProblem::Misaligned { unit: 4096 });
    let short = BlockHandle::new(h.offset, h.size - 1);
    let mismatch = CloneProblem::SizeMismatch { handle_size: h.size - 1, block_size: h.size };
    assert_eq!(refused(clone_block(&mut b, "a.sst", short, &block)).2, mismatch);
    // Keys hashed for the other filter layout would leave them out of this table's filter.
    let per_block = BlockKeys::of(&block, FilterLayout::PerBlock).unwrap();
    let layouts =
        CloneProblem::FilterLayout { keys: FilterLayout::PerBlock.name(), table: FilterLayout::PerTable.name() };
    assert_eq!(refused(b.add_cloned_block("a.sst", h, &block, &per_block)).2, layouts);
    assert_eq!(fs.stats(), before);
    assert_eq!(b.pending_block_entries(), 1);
    // A key that fits the open page goes in it; the builder still works after refusals.
    assert!(b.fits_in_current_block(&ikey("k999999", 0), 10));
    assert!(!b.fits_in_current_block(&ikey("k999999", 0), 5000));
    b.add(&ikey("k999999", 0), b"ok").unwrap();
    b.flush_data_block().unwrap();
    assert!(b.current_block_is_empty());
    assert_eq!(b.file_size(), 4096);
    b.finish().unwrap();
}

/// Clones `block` (at `h` of `src`) into `b`, with the summary of its keys a merge would have gathered.
fn clone_block(b: &mut TableBuilder, src: &str, h: BlockHandle, block: &Block) -> lsm::Result<lsm::sst::CloneOutcome> {
    b.add_cloned_block(src, h, block, &BlockKeys::of(block, Options::default().filter_layout)?)
}

/// The first key of `block`.
fn first_key(block: &Block) -> Vec<u8> {
    let mut it = block.iter();
    it.seek_to_first();
    it.key().to_vec()
}

#[test]
fn an_empty_block_is_not_cloned() {
    let fs = MemFs::new();
    let mut empty = BlockBuilder::new(16);
    let block = Block::new(empty.finish().to_vec(), "a.sst", 0).unwrap();
    let mut b = TableBuilder::new(&aligned(), fs.create("b.sst").unwrap(), 4096);
    let r = clone_block(&mut b, "a.sst", BlockHandle::new(0, block.size() as u64), &block);
    assert!(matches!(r, Err(Error::BadClonedBlock { problem: CloneProblem::Empty, .. })), "{r:?}");
}

#[test]
fn a_block_ending_past_the_largest_offset_is_not_cloned() {
    let fs = MemFs::new();
    build_a(&fs);
    let a = open(&fs, "a.sst", 1, &aligned(), None).unwrap();
    let block = a.data_block(0, &ReadOptions::default()).unwrap();
    let size = block.size() as u64;
    // The last offset aligned to a 512-byte unit: the block (and its trailer) would end past u64::MAX.
    let far = BlockHandle::new(u64::MAX - u64::MAX % 512, size);
    assert!(size > 512);
    let mut b = TableBuilder::new(&aligned(), fs.create("b.sst").unwrap(), 512);
    let r = clone_block(&mut b, "a.sst", far, &block);
    assert!(
        matches!(r, Err(Error::BadClonedBlock { problem: CloneProblem::TooLarge { size: s }, .. }) if s == size),
        "{r:?}"
    );
}

#[test]
fn a_table_that_does_not_start_on_a_page_takes_no_cloned_block() {
    let fs = MemFs::new();
    build_a(&fs);
    let a = open(&fs, "a.sst", 1, &aligned(), None).unwrap();
    let h = a.data_block_handles()[0];
    let block = a.data_block(0, &ReadOptions::default()).unwrap();
    let mut file = fs.create("u.sst").unwrap();
    file.append(&[0u8; 10]).unwrap();
    let mut b = TableBuilder::new(&aligned(), file, 4096);
    match clone_block(&mut b, "a.sst", h, &block) {
        Err(Error::BadClonedBlock { problem: CloneProblem::UnalignedTable { table, at, unit }, .. }) => {
            assert_eq!((table.as_str(), at, unit), ("u.sst", 10, 4096));
        }
        other => panic!("expected UnalignedTable, got {other:?}"),
    }
}

/// A cloned block's padding was written, and counted, once, by the table it came from: a table
/// that clones every block writes no padding and counts none (RemapCom's retention cost is the
/// zeros written, not the same padding again at every remap).
#[test]
fn a_cloned_blocks_padding_is_counted_once() {
    let fs = MemFs::new();
    let (blocks, a_padding) = {
        build_a(&fs);
        let a = open(&fs, "a.sst", 1, &aligned(), None).unwrap();
        let pad: u64 = a.data_block_handles().iter().map(|h| round_up(h.size + 5, 4096) - (h.size + 5)).sum();
        (a.num_data_blocks(), pad)
    };
    assert!(a_padding > 0, "A's blocks are padded to their pages");
    let all: Vec<usize> = (0..blocks).collect();
    let (_, cloned_len, props) = clone_into_b(&fs, &all);
    assert_eq!(cloned_len, 4096 * blocks as u64);
    assert_eq!(props.padding_bytes, 0, "B wrote no padding (A's {a_padding} bytes were counted in A)");
}
