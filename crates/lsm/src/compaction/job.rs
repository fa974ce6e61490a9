//! Runs a compaction: merges the input files in key order, drops what no reader can see any more,
//! and writes the rest through the observer into new SSTs of the output level.
//!
//! Drop rules (LevelDB's DoCompactionWork): an entry is dropped when a newer entry of the same user
//! key is already at or below the smallest live snapshot (it is hidden from every reader), or when
//! it is a deletion at or below that snapshot and no deeper level holds the key (nothing is left
//! for it to hide).
//!
//! Errors: every input block is verified (whatever `paranoid_checks` says) and the first error
//! fails the compaction, whose outputs are then removed; the inputs stay as they were.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::sync::Arc;

use storage::{Fs, WriteHint};

use super::observer::{CompactionObserver, EntrySource, InputInfo};
use super::output::{OutputFile, OutputLimits, OutputWriter};
use super::Compaction;
use crate::cpu::{self, Term};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{compare_internal, parse_internal_key, user_key, SequenceNumber, ValueKind, MAX_SEQUENCE};
use crate::options::{Options, ReadOptions};
use crate::sst::TableIterator;
use crate::table_cache::TableCache;

/// What a compaction did, for the per-level statistics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobStats {
    /// Bytes of the input files of the input level and of the output level.
    pub input_bytes: [u64; 2],
    pub input_files: [usize; 2],
    pub input_data_blocks: u64,
    pub entries_read: u64,
    pub entries_dropped: u64,
    pub output_files: usize,
    pub output_bytes: u64,
    pub output_data_blocks: u64,
    pub padding_bytes: u64,
    /// Bytes placed in outputs by cloning, and by the copy fallback where cloning was impossible.
    pub cloned_bytes: u64,
    pub copied_bytes: u64,
    /// Output bytes written short-lived (the T-zone).
    pub short_lived_bytes: u64,
    /// Files of the output level rewritten unchanged (moves), and their bytes.
    pub moved_files: usize,
    pub moved_bytes: u64,
}

pub struct JobEnv<'a> {
    pub fs: Arc<dyn Fs>,
    pub dir: &'a str,
    pub options: &'a Options,
    pub table_cache: &'a TableCache,
    /// Called every [`FLUSH_CHECK_EVERY`] entries: lets the engine flush a memtable that filled
    /// while this job runs (an error fails the job).
    pub flush_imm: Option<&'a dyn Fn() -> Result<()>>,
    /// A host CPU charge point (see [`crate::cpu`]), called after each entry merged.
    pub charge: &'a dyn Fn(),
}

/// Entries merged between two [`JobEnv::flush_imm`] calls.
pub const FLUSH_CHECK_EVERY: u64 = 256;

/// Runs `c`; on error every output written so far is removed.
pub fn run_compaction(
    env: &JobEnv,
    c: &Compaction,
    smallest_snapshot: SequenceNumber,
    new_number: &mut dyn FnMut() -> u64,
    observer: &mut dyn CompactionObserver,
) -> Result<(Vec<OutputFile>, JobStats)> {
    let read_opts = ReadOptions {
        // Always, as RocksDB's compactions do: an unverified damaged block that still parses
        // would be written out under a fresh checksum, and its damage would pass for data.
        verify_checksums: true,
        fill_cache_disabled: true,
        snapshot: None,
        readahead: env.options.compaction_readahead,
    };
    let mut stats = JobStats::default();
    let mut inputs: Vec<(TableIterator, EntrySourceBase)> = Vec::new();
    let mut infos = Vec::new();
    for (level, f) in c.all_inputs() {
        // Deeper inputs (gear) count with the output level's.
        let which = usize::from(level != c.level);
        stats.input_bytes[which] += f.size;
        stats.input_files[which] += 1;
        let table = env.table_cache.table(f.number, f.size)?;
        stats.input_data_blocks += table.num_data_blocks() as u64;
        infos.push(InputInfo {
            file_number: f.number,
            path: table.path().to_string(),
            level,
            data_blocks: table.num_data_blocks(),
        });
        let mut it = table.iter(&read_opts);
        it.seek_to_first();
        // An input whose first block fails would otherwise look empty to the merge below.
        it.status()?;
        inputs.push((it, EntrySourceBase { input: inputs.len(), file_number: f.number }));
    }
    // One writer per output level; they share the file-number source.
    let levels = c.output_levels();
    let numbers = RefCell::new(new_number);
    let mut next_numbers: Vec<Box<dyn FnMut() -> u64 + '_>> =
        levels.iter().map(|_| Box::new(|| (numbers.borrow_mut())()) as Box<dyn FnMut() -> u64>).collect();
    let grandparents: Vec<Vec<Arc<crate::version::FileMeta>>> = levels
        .iter()
        .map(|&l| if l == c.output_level { c.grandparents.clone() } else { grandparents_of(c, l) })
        .collect();
    let splits: Vec<Vec<Vec<u8>>> = levels
        .iter()
        .map(|&l| if l == c.output_level { c.split_at.clone() } else { splits_around_kept_files(c, l) })
        .collect();
    let mut outs: Vec<OutputWriter> = levels
        .iter()
        .zip(next_numbers.iter_mut())
        .zip(grandparents.iter().zip(splits.iter()))
        .map(|((&level, next), (gp, split_at))| {
            let hint = WriteHint::Compaction { output_level: level.min(u8::MAX as usize) as u8 };
            OutputWriter::new(
                Arc::clone(&env.fs),
                env.dir,
                env.options,
                hint,
                &mut **next,
                OutputLimits {
                    max_file_size: c.max_output_file_size,
                    grandparents: gp,
                    max_grandparent_overlap_bytes: c.max_grandparent_overlap_bytes,
                    split_at,
                    short_lived_from: c.short_lived_from.as_deref(),
                    windows: c.windows_of(level),
                },
            )
        })
        .collect();
    let result = merge(c, smallest_snapshot, &mut inputs, &infos, &mut outs, observer, env, &mut stats);
    if let Err(e) = result {
        for out in outs {
            out.abandon();
        }
        return Err(e);
    }
    let mut outputs = Vec::new();
    let mut failed = None;
    for out in outs {
        stats.cloned_bytes += out.placed.cloned_bytes;
        stats.copied_bytes += out.placed.copied_bytes;
        if failed.is_some() {
            out.abandon();
            continue;
        }
        match out.finish() {
            Ok(files) => outputs.extend(files),
            Err(e) => failed = Some(e),
        }
    }
    if let Some(e) = failed {
        for o in &outputs {
            let _ = env.fs.remove(&crate::filename::table_name(env.dir, o.number));
        }
        return Err(e);
    }
    stats.output_files = outputs.len();
    stats.output_bytes = outputs.iter().map(|o| o.size).sum();
    stats.output_data_blocks = outputs.iter().map(|o| o.props.num_data_blocks).sum();
    stats.padding_bytes = outputs.iter().map(|o| o.props.padding_bytes).sum();
    stats.short_lived_bytes = outputs.iter().filter(|o| o.short_lived).map(|o| o.size).sum();
    Ok((outputs, stats))
}

/// Where outputs routed to a deeper `level` are cut: at the start of every file of that level that
/// stays (is not an input) inside the compaction's range, so that no output spans one. (Keys
/// routed there never fall inside such a file; an output could only reach across it.)
fn splits_around_kept_files(c: &Compaction, level: usize) -> Vec<Vec<u8>> {
    let Some((lo, hi)) = c.user_range() else { return c.split_at.clone() };
    let input = |n: u64| c.all_inputs().any(|(l, f)| l == level && f.number == n);
    let mut splits: Vec<Vec<u8>> = c
        .version
        .overlapping_inputs(level, Some(&lo), Some(&hi))
        .iter()
        .filter(|f| !input(f.number))
        .map(|f| f.smallest_user().to_vec())
        .chain(c.split_at.iter().cloned())
        .collect();
    splits.sort();
    splits.dedup();
    splits
}

/// The files of the level below `level` that outputs written to `level` overlap.
fn grandparents_of(c: &Compaction, level: usize) -> Vec<Arc<crate::version::FileMeta>> {
    let v = &c.version;
    let Some((lo, hi)) = c.user_range() else { return Vec::new() };
    if level + 1 >= v.num_levels() {
        return Vec::new();
    }
    v.overlapping_inputs(level + 1, Some(&lo), Some(&hi))
}

/// Rewrites `c.moves` unchanged into new files of the output level, written with the move hint
/// (lifetime-leveling's moves: the bytes are copied so that the file lands in its level's current
/// zone). On error every copy made so far is removed.
pub fn rewrite_moves(env: &JobEnv, c: &Compaction, new_number: &mut dyn FnMut() -> u64) -> Result<Vec<OutputFile>> {
    let hint = WriteHint::Move { output_level: c.output_level.min(u8::MAX as usize) as u8 };
    let mut done: Vec<OutputFile> = Vec::new();
    let r = (|| -> Result<()> {
        for f in &c.moves {
            let bytes = storage::read_all(&*env.fs, &crate::filename::table_name(env.dir, f.number))?;
            let number = new_number();
            let path = crate::filename::table_name(env.dir, number);
            done.push(OutputFile {
                number,
                size: f.size,
                smallest: f.smallest.clone(),
                largest: f.largest.clone(),
                props: Default::default(),
                short_lived: false,
                level: c.output_level,
            });
            let mut w = env.options.create_file(&*env.fs, &path, hint)?;
            w.append(&bytes)?;
            w.sync()?;
        }
        Ok(())
    })();
    if let Err(e) = r {
        for o in &done {
            let _ = env.fs.remove(&crate::filename::table_name(env.dir, o.number));
        }
        return Err(e);
    }
    Ok(done)
}

struct EntrySourceBase {
    input: usize,
    file_number: u64,
}

// The merge is where the inputs, the outputs, the plug-in and the engine's flush hook meet;
// bundling them into a struct would only rename the list.
#[allow(clippy::too_many_arguments)]
fn merge(
    c: &Compaction,
    smallest_snapshot: SequenceNumber,
    inputs: &mut [(TableIterator, EntrySourceBase)],
    infos: &[InputInfo],
    outs: &mut [OutputWriter],
    observer: &mut dyn CompactionObserver,
    env: &JobEnv,
    stats: &mut JobStats,
) -> Result<()> {
    observer.begin(infos)?;
    let output_levels = c.output_levels();
    // The user key of the entries seen last (one buffer for the whole merge: no allocation per key).
    let mut current_user_key: Option<Vec<u8>> = None;
    let mut last_sequence_for_key = MAX_SEQUENCE;
    loop {
        // The smallest key among the inputs (few inputs: a linear scan beats a heap).
        let mut best: Option<usize> = None;
        for (i, (it, _)) in inputs.iter().enumerate() {
            if !it.valid() {
                continue;
            }
            if best.is_none_or(|b| compare_internal(it.key(), inputs[b].0.key()) == Ordering::Less) {
                best = Some(i);
            }
        }
        let Some(b) = best else { break };
        let (it, base) = &inputs[b];
        let key = it.key();
        stats.entries_read += 1;
        cpu::count(Term::KeyMerged, 1);
        if let (0, Some(flush)) = (stats.entries_read % FLUSH_CHECK_EVERY, env.flush_imm) {
            flush()?;
        }
        let drop = match parse_internal_key(key) {
            None => {
                return Err(Error::corruption(&infos[b].path, 0, "compaction input holds a malformed internal key"));
            }
            Some(p) => {
                if current_user_key.as_deref() != Some(p.user_key) {
                    let current = current_user_key.get_or_insert_with(Vec::new);
                    current.clear();
                    current.extend_from_slice(p.user_key);
                    last_sequence_for_key = MAX_SEQUENCE;
                }
                let drop = if last_sequence_for_key <= smallest_snapshot {
                    true
                } else {
                    p.kind == ValueKind::Deletion && p.seq <= smallest_snapshot && c.is_base_level_for_key(p.user_key)
                };
                last_sequence_for_key = p.seq;
                drop
            }
        };
        if drop {
            stats.entries_dropped += 1;
        }
        let (block, handle) =
            it.current_block().ok_or_else(|| Error::corruption(&infos[b].path, 0, "entry outside a data block"))?;
        let src = EntrySource { input: base.input, file_number: base.file_number, block, handle };
        let out = match outs.len() {
            1 => &mut outs[0],
            _ => {
                let level = c.level_for_key(user_key(key));
                &mut outs[output_levels.iter().position(|&l| l == level).unwrap_or(0)]
            }
        };
        observer.on_entry(out, src, it, key, it.value(), !drop)?;
        (env.charge)();
        inputs[b].0.next();
        inputs[b].0.status()?;
    }
    for (it, _) in inputs.iter() {
        it.status()?;
    }
    observer.finish(&mut outs[0])
}
