//! Repair: rebuilds a database from the SSTs and WALs found in its directory, for when CURRENT or
//! the MANIFEST is lost or damaged (LevelDB's `RepairDB`, RocksDB's `ldb repair`).
//!
//! Contract: a folder with none of a database's files in it (no CURRENT, MANIFEST, SST or WAL) is
//! refused with [`Error::NotFound`] before anything is written. Nothing is deleted. The old MANIFESTs, CURRENT, every WAL once converted and every
//! damaged SST go to `lost/`; the report says what was kept and what was dropped.
//! 1. Each WAL, oldest first, is read leniently (every readable record, damage skipped and
//!    counted) and written to a level-0 SST.
//! 2. Each SST is read whole with its checksums verified, for its key range and largest sequence.
//!    An SST with damaged blocks is rewritten from its readable blocks; one that cannot be opened
//!    at all is set aside whole.
//! 3. A new MANIFEST names every SST in level 0, with the largest sequence found; CURRENT names it.
//! 4. The database is opened and compacted whole, so each key's newest version wins whatever
//!    the order of the files (level 0's lookups go by file number, which says nothing about the
//!    age of the data in files from different levels).
//!
//! Limit (LevelDB's too): an SST that a crash left behind after a compaction had replaced it
//! holds versions that deletions in the bottom level may no longer hide; such files exist only
//! between a crash and the next open, which removes them.

use std::fmt;
use std::sync::Arc;

use storage::{Env, Fs};

use super::jobs::write_memtable;
use super::recovery::{list, move_to_lost};
use super::{Db, WalReplay};
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::iter::InternalIterator;
use crate::key::{compare_internal, parse_internal_key, SequenceNumber};
use crate::memtable::MemTable;
use crate::options::{Options, ReadOptions};
use crate::sst::table::Table;
use crate::version::{VersionEdit, VersionSet};
use crate::wal::{LogReader, ReadMode};

/// One SST the repair found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairedTable {
    pub file: String,
    /// Entries kept.
    pub entries: u64,
    /// Data blocks that failed their checksum or could not be parsed (their entries are dropped).
    pub damaged_blocks: u64,
    /// Why the whole file was dropped, when it was.
    pub dropped: Option<String>,
    /// The error of a damaged filter block: the table is kept (a filter holds no data) and the
    /// repair's compaction writes it anew with a new filter.
    pub damaged_filter: Option<String>,
}

/// What a repair kept and dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairReport {
    pub dir: String,
    /// Every WAL, converted to an SST.
    pub wals: Vec<WalReplay>,
    pub tables: Vec<RepairedTable>,
    /// The largest sequence found: the repaired database's last sequence.
    pub last_sequence: SequenceNumber,
    /// Files moved to `lost/`.
    pub set_aside: Vec<String>,
}

impl RepairReport {
    pub fn entries_kept(&self) -> u64 {
        self.tables.iter().map(|t| t.entries).sum()
    }

    /// Nothing readable was dropped (files set aside as already used do not count).
    pub fn dropped_nothing(&self) -> bool {
        self.tables.iter().all(|t| t.damaged_blocks == 0 && t.dropped.is_none())
            && self.wals.iter().all(|w| w.bytes_dropped == 0 && w.problems.is_empty())
    }
}

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = self.tables.iter().filter(|t| t.dropped.is_none()).count();
        writeln!(
            f,
            "repair of {}: {} SST(s) kept with {} entries, last sequence {}",
            self.dir,
            kept,
            self.entries_kept(),
            self.last_sequence
        )?;
        for w in &self.wals {
            write!(f, "  WAL {}: {} records converted", w.file, w.records_applied)?;
            if w.bytes_dropped > 0 || !w.problems.is_empty() {
                write!(f, ", {} bytes dropped", w.bytes_dropped)?;
                for p in &w.problems {
                    write!(f, "; at offset {}: {}", p.offset, p.reason)?;
                }
            }
            writeln!(f)?;
        }
        for t in &self.tables {
            if let Some(e) = &t.damaged_filter {
                writeln!(f, "  SST {}: filter block damaged, rebuilt: {e}", t.file)?;
            }
        }
        for t in self.tables.iter().filter(|t| t.damaged_blocks > 0 || t.dropped.is_some()) {
            match &t.dropped {
                Some(why) => writeln!(f, "  SST {} dropped: {why}", t.file)?,
                None => writeln!(
                    f,
                    "  SST {}: {} damaged block(s) dropped, {} entries kept",
                    t.file, t.damaged_blocks, t.entries
                )?,
            }
        }
        match self.set_aside.len() {
            0 => write!(f, "  nothing set aside"),
            n => write!(f, "  {n} file(s) kept in lost/: {}", list(self.set_aside.iter().cloned())),
        }
    }
}

/// Rebuilds the database in `dir` from the files found there (see the module's contract), then
/// opens it with `options` and compacts it whole. The database must not be open.
pub fn repair(env: Env, dir: &str, options: Options) -> Result<RepairReport> {
    options.validate()?;
    let fs = Arc::clone(env.fs());
    if !fs.exists(dir)? {
        return Err(Error::NotFound { dir: dir.to_string(), what: "the directory does not exist".into() });
    }
    refuse_a_folder_without_database_files(&*fs, dir)?;
    let lock = fs.lock(&filename::lock_name(dir))?;
    let mut report = RepairReport { dir: dir.to_string(), ..RepairReport::default() };
    let (mut tables, mut logs, mut max_number) = (Vec::new(), Vec::new(), 1);
    for name in fs.list(dir)? {
        let path = filename::join(dir, &name);
        match filename::parse(&name) {
            Some(FileKind::Table(n)) => tables.push(n),
            Some(FileKind::Log(n)) => logs.push(n),
            Some(FileKind::Manifest(_)) | Some(FileKind::Current) => {
                report.set_aside.push(move_to_lost(&*fs, dir, &path)?)
            }
            _ => continue,
        }
        if let Some(FileKind::Table(n) | FileKind::Log(n) | FileKind::Manifest(n)) = filename::parse(&name) {
            max_number = max_number.max(n);
        }
    }
    logs.sort_unstable();
    tables.sort_unstable();
    let mut next_number = max_number + 1;
    for n in logs {
        let path = filename::log_name(dir, n);
        let (replay, mem) = read_wal(&*fs, &path)?;
        report.wals.push(replay);
        if !mem.is_empty() {
            write_memtable(&*fs, &filename::table_name(dir, next_number), &options, &mem, &|| {})?;
            tables.push(next_number);
            next_number += 1;
        }
        report.set_aside.push(move_to_lost(&*fs, dir, &path)?);
    }
    let mut edit = VersionEdit::default();
    for n in tables {
        let scanned = scan_table(&*fs, dir, &options, n, &mut next_number, &mut report)?;
        if let Some(k) = scanned {
            edit.add_file(0, k.number, k.size, k.smallest, k.largest);
        }
    }
    let mut versions = VersionSet::new(Arc::clone(&fs), dir, &options);
    versions.create_new()?;
    versions.mark_file_number_used(next_number);
    versions.last_sequence = report.last_sequence;
    versions.log_and_apply(&mut edit)?;
    drop(versions);
    drop(lock);
    let db = Db::open(env, dir, Options { create_if_missing: false, ..options })?;
    db.compact_range(None, None)?;
    db.close()?;
    Ok(report)
}

/// A repair writes CURRENT, a MANIFEST, LOCK and a WAL wherever it is pointed; pointed at the
/// wrong folder (the parent of the database, a folder of experiment files) it would make a new,
/// empty database there and report success. So a folder holding none of the files a database is
/// made of is refused before anything is written.
fn refuse_a_folder_without_database_files(fs: &dyn Fs, dir: &str) -> Result<()> {
    let database_file = |name: &String| {
        matches!(
            filename::parse(name),
            Some(FileKind::Current | FileKind::Manifest(_) | FileKind::Table(_) | FileKind::Log(_))
        )
    };
    if fs.list(dir)?.iter().any(database_file) {
        return Ok(());
    }
    Err(Error::NotFound {
        dir: dir.to_string(),
        what: "it holds none of a database's files (CURRENT, MANIFEST-NNNNNN, NNNNNN.ldb or NNNNNN.sst, \
               NNNNNN.log), so there is nothing to repair; nothing was written"
            .into(),
    })
}

/// Every readable record of WAL `path` in a memtable, with what was dropped.
fn read_wal(fs: &dyn Fs, path: &str) -> Result<(WalReplay, MemTable)> {
    let mut reader = LogReader::new(fs.open(path)?, ReadMode::Lenient);
    let mut replay = WalReplay { file: path.to_string(), ..WalReplay::default() };
    let mem = MemTable::new();
    while let Some(record) = reader.next_record()? {
        let offset = reader.last_record_offset();
        let Ok(batch) = WriteBatch::from_data(record, path, offset) else {
            replay.records_dropped += 1;
            continue;
        };
        let seq = batch.sequence();
        let ops: Result<Vec<_>> = batch.iter().collect();
        match ops {
            Ok(ops) => {
                for (i, op) in ops.into_iter().enumerate() {
                    mem.add(seq + i as u64, op.kind, op.key, op.value);
                }
                replay.records_applied += u64::from(batch.count() > 0);
            }
            Err(_) => {
                replay.records_dropped += 1;
                replay.bytes_dropped += batch.data().len() as u64;
            }
        }
    }
    replay.problems = reader.problems().iter().chain(reader.tail()).cloned().collect();
    replay.bytes_dropped += replay.problems.iter().map(|p| p.bytes).sum::<u64>();
    Ok((replay, mem))
}

/// An SST the new MANIFEST names.
struct Kept {
    number: u64,
    size: u64,
    smallest: Vec<u8>,
    largest: Vec<u8>,
}

/// Reads SST `n` whole. Returns the file to name in level 0 (`n` itself, or a rewrite of its
/// readable blocks numbered from `next_number`), or `None` when nothing of it is kept.
fn scan_table(
    fs: &dyn Fs,
    dir: &str,
    options: &Options,
    n: u64,
    next_number: &mut u64,
    report: &mut RepairReport,
) -> Result<Option<Kept>> {
    let path = filename::table_name(dir, n);
    let mut t = RepairedTable { file: path.clone(), ..RepairedTable::default() };
    let size = fs.file_size(&path)?;
    let paranoid = Options { paranoid_checks: true, ..options.clone() };
    let opened = fs.open(&path).map_err(Error::from).and_then(|f| Table::open(Arc::from(f), size, n, &paranoid, None));
    let entries = match opened {
        Ok(table) => {
            t.damaged_filter = table.filter_damage().map(Error::to_string);
            readable_entries(&table, &mut t)
        }
        Err(e) => {
            t.dropped = Some(e.to_string());
            Vec::new()
        }
    };
    t.entries = entries.len() as u64;
    for (k, _) in &entries {
        if let Some(p) = parse_internal_key(k) {
            report.last_sequence = report.last_sequence.max(p.seq);
        }
    }
    let (Some(smallest), Some(largest)) = (entries.first().map(|e| e.0.clone()), entries.last().map(|e| e.0.clone()))
    else {
        t.dropped.get_or_insert_with(|| "no readable entry".into());
        report.tables.push(t);
        report.set_aside.push(move_to_lost(fs, dir, &path)?);
        return Ok(None);
    };
    let damaged = t.damaged_blocks > 0;
    report.tables.push(t);
    if !damaged {
        return Ok(Some(Kept { number: n, size, smallest, largest }));
    }
    // The readable blocks' entries, rewritten in order (a memtable sorts them as the file did).
    let number = *next_number;
    *next_number += 1;
    let mem = MemTable::new();
    for (k, v) in &entries {
        if let Some(p) = parse_internal_key(k) {
            mem.add(p.seq, p.kind, p.user_key, v);
        }
    }
    let (size, _, _) = write_memtable(fs, &filename::table_name(dir, number), options, &mem, &|| {})?;
    report.set_aside.push(move_to_lost(fs, dir, &path)?);
    Ok(Some(Kept { number, size, smallest, largest }))
}

/// The entries of every data block of `table` that reads whole (checksum, parse, key order);
/// each one that does not is counted in `t`.
fn readable_entries(table: &Table, t: &mut RepairedTable) -> Vec<(Vec<u8>, Vec<u8>)> {
    let verify = ReadOptions { verify_checksums: true, ..ReadOptions::default() };
    let mut entries = Vec::new();
    for i in 0..table.num_data_blocks() {
        let Ok(block) = table.data_block(i, &verify) else {
            t.damaged_blocks += 1;
            continue;
        };
        let mut it = block.iter();
        let mut block_entries = Vec::new();
        it.seek_to_first();
        while it.valid() {
            block_entries.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        let in_order = block_entries.windows(2).all(|w| compare_internal(&w[0].0, &w[1].0).is_lt());
        if it.status().is_err() || !in_order || block_entries.iter().any(|(k, _)| parse_internal_key(k).is_none()) {
            t.damaged_blocks += 1;
            continue;
        }
        entries.extend(block_entries);
    }
    entries
}
