//! RemapCom's state machine against brute-force oracles, one compaction at a time.
//!
//! Random aligned input SSTs (a level-0 or level-1 input file or several, over overlapping files of
//! the level below, with overwrites, deletions and a random snapshot) are compacted with
//! `run_compaction` under each mode. Two oracles, computed without RemapCom:
//! - logical: an input data block is a UDB iff its entries are a contiguous run of the expected merge
//!   output (the inputs sorted, LevelDB's drop rules applied by brute force);
//! - physical: an input data block came out unchanged iff its bytes (contents + trailer) appear at an
//!   aligned offset of some output table.
//!
//! Checked: every mode writes exactly the expected entries; the state machine finds exactly the
//! logical UDBs; `full` clones every one of them and nothing else, and they are exactly the blocks
//! found physically; `base` clones a subset; with `off` every block that happens to come out unchanged
//! is a logical UDB (the oracles agree).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use lsm::compaction::job::{run_compaction, JobEnv, JobStats};
use lsm::compaction::observer::{CompactionObserver, PassThrough};
use lsm::compaction::remapcom::{RemapCom, RemapMode};
use lsm::compaction::{Compaction, CompactionReason};
use lsm::filename::table_name;
use lsm::iter::InternalIterator;
use lsm::key::{compare_internal, internal_key, parse_internal_key, SequenceNumber, ValueKind, MAX_SEQUENCE};
use lsm::sst::TableBuilder;
use lsm::table_cache::TableCache;
use lsm::version::{FileMeta, Version};
use lsm::{Options, ReadOptions};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use storage::{read_all, Fs, MemFs};

type Entry = (Vec<u8>, Vec<u8>);
type BlockId = (u64, usize);

const DIR: &str = "db";
const PAGE: u64 = 4096;

fn options() -> Options {
    Options { align_blocks: true, remap: RemapMode::Full, ..Options::default() }
}

/// Shape of one random case.
#[derive(Clone, Debug)]
struct Case {
    seed: u64,
    /// Input files of the upper level (level 0 if > 1).
    upper_files: usize,
    lower_files: usize,
    /// Keys in the key space, and per mille of them each upper file writes.
    keys: usize,
    upper_density: u64,
    max_value: usize,
    max_output_file_size: u64,
    /// Snapshot as a fraction (per mille) of the sequence numbers used; 1000 = none held.
    snapshot_per_mille: u64,
}

fn case_strategy() -> impl Strategy<Value = Case> {
    (
        any::<u64>(),
        1usize..4,
        1usize..4,
        200usize..1500,
        5u64..400,
        prop_oneof![Just(400usize), Just(1200), Just(4096)],
        prop_oneof![Just(64u64 << 10), Just(2 << 20)],
        prop_oneof![Just(1000u64), 0u64..1000],
    )
        .prop_map(
            |(
                seed,
                upper_files,
                lower_files,
                keys,
                upper_density,
                max_value,
                max_output_file_size,
                snapshot_per_mille,
            )| Case {
                seed,
                upper_files,
                lower_files,
                keys,
                upper_density,
                max_value,
                max_output_file_size,
                snapshot_per_mille,
            },
        )
}

fn new_fs() -> MemFs {
    let fs = MemFs::builder().block_size(PAGE).build();
    fs.create_dir_all(DIR).unwrap();
    fs
}

fn user(i: usize) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Builds one aligned SST from sorted entries; returns its metadata.
fn build_table(fs: &MemFs, number: u64, entries: &[Entry], align: bool) -> Arc<FileMeta> {
    let path = table_name(DIR, number);
    let o = Options { align_blocks: align, ..options() };
    let mut b = TableBuilder::new(&o, fs.create(&path).unwrap(), fs.block_size());
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    let props = b.finish().unwrap();
    b.into_file().sync().unwrap();
    Arc::new(FileMeta::new(number, props.file_size, props.smallest_key, props.largest_key))
}

/// The inputs of a random compaction, built on `fs` (aligned), and the smallest snapshot.
fn build_inputs(fs: &MemFs, case: &Case) -> (Compaction, SequenceNumber) {
    build_inputs_with(fs, case, true)
}

fn build_inputs_with(fs: &MemFs, case: &Case, align: bool) -> (Compaction, SequenceNumber) {
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(case.seed);
    let mut seq: SequenceNumber = 1;
    let value = |rng: &mut rand_pcg::Pcg64Mcg, seq: u64| -> Vec<u8> {
        let len = 100 + (rng.next_u64() as usize) % (case.max_value - 99);
        let mut v = format!("{seq}:").into_bytes();
        v.resize(len, b'a' + (seq % 26) as u8);
        v
    };
    // Lower level: the key space cut into `lower_files` non-overlapping ranges, dense, with some
    // deletions (kept: they still hide nothing below, but only a compaction at the base drops them).
    let mut lower = Vec::new();
    let per_file = case.keys.div_ceil(case.lower_files);
    for f in 0..case.lower_files {
        let mut entries = Vec::new();
        for i in f * per_file..((f + 1) * per_file).min(case.keys) {
            if rng.next_u64() % 10 == 0 {
                continue;
            }
            let kind = if rng.next_u64() % 25 == 0 { ValueKind::Deletion } else { ValueKind::Value };
            let v = if kind == ValueKind::Value { value(&mut rng, seq) } else { Vec::new() };
            entries.push((internal_key(&user(i), seq, kind), v));
            seq += 1;
        }
        if !entries.is_empty() {
            lower.push(build_table(fs, 100 + f as u64, &entries, align));
        }
    }
    // Upper level: sparse random updates, newer than everything below; with several files, level 0
    // (files overlap; each file newer than the previous).
    let mut upper = Vec::new();
    for f in 0..case.upper_files {
        let mut entries = Vec::new();
        for i in 0..case.keys {
            if rng.next_u64() % 1000 >= case.upper_density {
                continue;
            }
            let kind = if rng.next_u64() % 8 == 0 { ValueKind::Deletion } else { ValueKind::Value };
            let v = if kind == ValueKind::Value { value(&mut rng, seq) } else { Vec::new() };
            entries.push((internal_key(&user(i), seq, kind), v));
            seq += 1;
        }
        if !entries.is_empty() {
            upper.push(build_table(fs, 200 + f as u64, &entries, align));
        }
    }
    // No snapshot held: the smallest snapshot is the last sequence number (as in the engine).
    let snapshot = if case.snapshot_per_mille >= 1000 { seq } else { seq * case.snapshot_per_mille / 1000 };
    let level = if case.upper_files > 1 { 0 } else { 1 };
    let options = Options { max_file_size: case.max_output_file_size, ..Options::default() };
    let mut c = Compaction::new(
        level,
        level + 1,
        [upper, lower],
        CompactionReason::Manual,
        &options.tree_shape(),
        &Arc::new(Version::empty(7)),
    );
    c.max_grandparent_overlap_bytes = u64::MAX;
    (c, snapshot)
}

/// Every entry of `number`'s data blocks, block by block.
fn table_blocks(cache: &TableCache, f: &FileMeta) -> Vec<Vec<Entry>> {
    let table = cache.table(f.number, f.size).unwrap();
    let ro = ReadOptions::default();
    (0..table.num_data_blocks())
        .map(|i| {
            let block = table.data_block(i, &ro).unwrap();
            let mut it = block.iter();
            it.seek_to_first();
            let mut v = Vec::new();
            while it.valid() {
                v.push((it.key().to_vec(), it.value().to_vec()));
                it.next();
            }
            it.status().unwrap();
            v
        })
        .collect()
}

/// LevelDB's drop rules, by brute force over the sorted inputs (no level below the output).
fn expected_output(all: &mut [Entry], snapshot: SequenceNumber) -> Vec<Entry> {
    all.sort_by(|a, b| compare_internal(&a.0, &b.0));
    let mut out = Vec::new();
    let mut current: Option<Vec<u8>> = None;
    let mut last_seq = MAX_SEQUENCE;
    for (k, v) in all.iter() {
        let p = parse_internal_key(k).unwrap();
        if current.as_deref() != Some(p.user_key) {
            current = Some(p.user_key.to_vec());
            last_seq = MAX_SEQUENCE;
        }
        let drop = last_seq <= snapshot || (p.kind == ValueKind::Deletion && p.seq <= snapshot);
        last_seq = p.seq;
        if !drop {
            out.push((k.clone(), v.clone()));
        }
    }
    out
}

/// The logical oracle: blocks whose entries are a contiguous run of `expected`.
fn logical_udbs(blocks: &[(BlockId, Vec<Entry>)], expected: &[Entry]) -> BTreeSet<BlockId> {
    let pos: HashMap<&[u8], usize> = expected.iter().enumerate().map(|(i, (k, _))| (k.as_slice(), i)).collect();
    blocks
        .iter()
        .filter(|(_, entries)| {
            let Some(&start) = entries.first().and_then(|(k, _)| pos.get(k.as_slice())) else {
                return false;
            };
            entries.iter().enumerate().all(|(j, e)| expected.get(start + j) == Some(e))
        })
        .map(|(id, _)| *id)
        .collect()
}

/// The physical oracle: input blocks whose bytes (contents + trailer) sit at an aligned offset of an
/// output file.
fn physical_udbs(fs: &MemFs, inputs: &[Arc<FileMeta>], cache: &TableCache, outputs: &[u64]) -> BTreeSet<BlockId> {
    let outs: Vec<Vec<u8>> = outputs.iter().map(|n| read_all(fs, &table_name(DIR, *n)).unwrap()).collect();
    let mut found = BTreeSet::new();
    for f in inputs {
        let bytes = read_all(fs, &table_name(DIR, f.number)).unwrap();
        let table = cache.table(f.number, f.size).unwrap();
        for (i, h) in table.data_block_handles().iter().enumerate() {
            let blk = &bytes[h.offset as usize..(h.offset + h.size + 5) as usize];
            let hit = outs
                .iter()
                .any(|o| (0..o.len()).step_by(PAGE as usize).any(|at| o.get(at..at + blk.len()) == Some(blk)));
            if hit {
                found.insert((f.number, i));
            }
        }
    }
    found
}

struct Run {
    entries: Vec<Entry>,
    outputs: Vec<u64>,
    stats: JobStats,
    found: BTreeSet<BlockId>,
    cloned: BTreeSet<BlockId>,
}

fn compact(fs: &MemFs, c: &Compaction, snapshot: SequenceNumber, mode: RemapMode) -> Run {
    let opts = Options { remap: mode, ..options() };
    let fs_arc: Arc<dyn Fs> = Arc::new(fs.clone());
    let cache = TableCache::new(Arc::clone(&fs_arc), DIR, &opts);
    let env = JobEnv { fs: fs_arc, dir: DIR, options: &opts, table_cache: &cache, flush_imm: None, charge: &|| {} };
    let base = match mode {
        RemapMode::Off => 1000,
        RemapMode::Base => 2000,
        RemapMode::Full => 3000,
    };
    let mut next = base;
    let mut new_number = || {
        next += 1;
        next
    };
    let mut pass = PassThrough;
    let mut remap = RemapCom::new(mode, fs.block_size(), opts.filter_layout).with_trace();
    let observer: &mut dyn CompactionObserver = if mode == RemapMode::Off { &mut pass } else { &mut remap };
    let (outputs, stats) = run_compaction(&env, c, snapshot, &mut new_number, observer).unwrap();
    let mut entries = Vec::new();
    for o in &outputs {
        let meta = FileMeta::new(o.number, o.size, o.smallest.clone(), o.largest.clone());
        for b in table_blocks(&cache, &meta) {
            entries.extend(b);
        }
    }
    let trace = remap.trace().cloned().unwrap_or_default();
    let u = remap.stats();
    assert_eq!(u.udbs_found as usize, trace.found.len());
    assert_eq!(u.udbs_cloned as usize, trace.cloned.len());
    Run {
        entries,
        outputs: outputs.iter().map(|o| o.number).collect(),
        stats,
        found: trace.found.into_iter().collect(),
        cloned: trace.cloned.into_iter().collect(),
    }
}

fn check_case(case: &Case) {
    let fs = new_fs();
    let (c, snapshot) = build_inputs(&fs, case);
    let inputs: Vec<Arc<FileMeta>> = c.inputs.iter().flatten().cloned().collect();
    let cache = TableCache::new(Arc::new(fs.clone()), DIR, &options());
    let mut all = Vec::new();
    let mut blocks = Vec::new();
    for f in &inputs {
        for (i, b) in table_blocks(&cache, f).into_iter().enumerate() {
            all.extend(b.iter().cloned());
            blocks.push(((f.number, i), b));
        }
    }
    let expected = expected_output(&mut all, snapshot);
    let logical = logical_udbs(&blocks, &expected);
    eprintln!("blocks {} logical {} expected {} all {}", blocks.len(), logical.len(), expected.len(), all.len());

    let mut cloned_counts = Vec::new();
    for mode in [RemapMode::Off, RemapMode::Base, RemapMode::Full] {
        let run = compact(&fs, &c, snapshot, mode);
        assert!(
            run.entries.len() == expected.len() && run.entries == expected,
            "{mode}: output differs from the brute-force merge ({} vs {} entries)",
            run.entries.len(),
            expected.len()
        );
        let physical = physical_udbs(&fs, &inputs, &cache, &run.outputs);
        assert!(
            physical.is_subset(&logical),
            "{mode}: blocks unchanged in the output that the logical oracle rejects: {:?}",
            physical.difference(&logical).collect::<Vec<_>>()
        );
        match mode {
            RemapMode::Off => assert!(run.cloned.is_empty() && run.stats.cloned_bytes == 0),
            RemapMode::Base => {
                assert_eq!(run.found, logical, "base: state machine vs logical oracle");
                assert!(run.cloned.is_subset(&logical));
                assert!(run.cloned.is_subset(&physical));
            }
            RemapMode::Full => {
                assert_eq!(run.found, logical, "full: state machine vs logical oracle");
                assert_eq!(run.cloned, logical, "full: every UDB is cloned, nothing else");
                assert_eq!(physical, logical, "full: the physical oracle sees exactly the UDBs");
            }
        }
        assert_eq!(run.stats.input_data_blocks as usize, blocks.len(), "{mode}: input data blocks");
        cloned_counts.push(run.cloned.len());
    }
    assert!(cloned_counts[2] >= cloned_counts[1], "full clones at least what base clones");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn state_machine_matches_the_oracles(case in case_strategy()) {
        check_case(&case);
    }
}

/// A case where the interesting paths are sure to be taken: dense lower level, very sparse updates.
#[test]
fn sparse_updates_leave_many_udbs_and_full_clones_them_all() {
    let case = Case {
        seed: 7,
        upper_files: 1,
        lower_files: 2,
        keys: 1500,
        upper_density: 15,
        max_value: 1200,
        max_output_file_size: 2 << 20,
        snapshot_per_mille: 1000,
    };
    check_case(&case);
    let fs = new_fs();
    let (c, snap) = build_inputs(&fs, &case);
    let full = compact(&fs, &c, snap, RemapMode::Full);
    let base = compact(&fs, &c, snap, RemapMode::Base);
    let ratio = full.found.len() as f64 / full.stats.input_data_blocks as f64;
    assert!(ratio > 0.3, "UDB ratio {ratio} with 1.5 % of keys updated");
    assert!(
        full.cloned.len() > base.cloned.len(),
        "retention clones more than base ({} vs {})",
        full.cloned.len(),
        base.cloned.len()
    );
    assert!(!base.cloned.is_empty(), "base clones UDBs at block boundaries");
    assert_eq!(
        full.stats.cloned_bytes + full.stats.copied_bytes,
        full.cloned.len() as u64 * PAGE,
        "each small UDB places exactly one page"
    );
}

/// Inputs written before `align_blocks` was turned on: their blocks are found but never cloned (a clone
/// must start at an aligned offset and carry its own padding), and the output is still exact.
#[test]
fn unaligned_inputs_are_written_not_cloned() {
    let case = Case {
        seed: 9,
        upper_files: 2,
        lower_files: 2,
        keys: 1200,
        upper_density: 20,
        max_value: 1200,
        max_output_file_size: 2 << 20,
        snapshot_per_mille: 1000,
    };
    let fs = new_fs();
    let (c, snap) = build_inputs_with(&fs, &case, false);
    let cache = TableCache::new(Arc::new(fs.clone()), DIR, &options());
    let mut all = Vec::new();
    for f in c.inputs.iter().flatten() {
        all.extend(table_blocks(&cache, f).into_iter().flatten());
    }
    let expected = expected_output(&mut all, snap);
    for mode in [RemapMode::Base, RemapMode::Full] {
        let run = compact(&fs, &c, snap, mode);
        assert!(run.entries == expected, "{mode}: output differs");
        assert!(!run.found.is_empty(), "{mode}: UDBs are still found");
        assert!(run.cloned.is_empty(), "{mode}: an unaligned block was cloned");
    }
}
