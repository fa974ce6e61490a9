//! The database: `Db::open(env, dir, options)` and its operations.
//!
//! Structure (LevelDB's): writes go to the WAL and the memtable; a full memtable becomes immutable
//! and is flushed to an SST in the background; compactions keep the levels in shape. A single
//! background worker runs one job (flush or compaction) at a time.
//!
//! Scheduling is the [`Env`]'s: the worker is a thread of the Env, stalls wait on its signals, a
//! slowdown sleeps on its clock, and job times are read from it. On a wall-clock Env that is real
//! threads and time; on a simulated one (made by SimFs and ZoneFs) the worker is a background lane
//! that runs in lockstep with the caller in simulated time, so the engine's requests reach the
//! device in simulated-time order (see `storage::env`). The engine never asks which it is on.
//!
//! Locks: the database's state is taken with [`Env::lock`] (the worker needs it too); the WAL is
//! behind a lock of its own that only writers take, so a WAL append or sync never holds the state.
//!
//! Guarantees: a write acknowledged with `sync` survives any crash; unsynced writes survive as a
//! prefix of the write order (the WAL of a full memtable is synced before the next one takes
//! writes). After a background error (a full device, a failed sync) writes are refused with that
//! error until the database is reopened; reads keep working.

mod destroy;
mod iter;
mod jobs;
mod obsolete;
mod recovery;
mod recovery_report;
mod repair;
mod replay;
mod stats;
mod write;

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use storage::env::Lane;
use storage::{Env, FileLock, Fs, Guard, Signal, Worker};

pub use destroy::destroy;
pub use iter::{DbIterator, ScanIter};
pub use recovery_report::{RecoveryReport, WalBreak, WalRecoveryMode, WalReplay};
pub use repair::{RepairReport, RepairedTable};
pub use stats::{DbStats, LevelStats, Stalls};

use crate::batch::WriteBatch;
use crate::compaction::strategy::CompactionStrategy;
use crate::cpu::{self, CpuMeter, Term};
use crate::error::{Error, Result};
use crate::key::{internal_key, SequenceNumber, ValueKind, KIND_FOR_SEEK};
use crate::memtable::{LookupResult, MemTable};
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::table_cache::TableCache;
use crate::version::{Version, VersionSet};
use crate::wal::LogWriter;

/// An open database. Dropping it closes it (flushing nothing: the WAL already holds every write).
pub struct Db {
    inner: Arc<DbInner>,
}

pub(crate) struct DbInner {
    pub env: Env,
    pub dir: String,
    pub options: Options,
    pub table_cache: Arc<TableCache>,
    pub strategy: Arc<dyn CompactionStrategy>,
    pub state: Mutex<DbState>,
    /// The WAL; only writers take it, before the state.
    pub writer: Mutex<Writer>,
    /// Signalled when a job finishes or the state changes in a way waiters care about.
    pub done: Signal,
    /// Signalled when an install gives back its turn (only another lane's job waits for it).
    pub install_turn_free: Signal,
    /// The background worker: compactions, one at a time, and flushes too without a flush lane.
    pub worker: Arc<Worker>,
    /// The flush lane's worker, under [`Options::flush_lane`]: flushes, one at a time.
    pub flusher: Option<Arc<Worker>>,
    /// Mirrors `DbState::imm.is_some()`, for a running compaction to notice without the lock.
    pub imm_pending: AtomicBool,
    /// The host CPU the engine's work costs (see [`crate::cpu`]).
    pub cpu: CpuMeter,
}

/// What only writers touch: the WAL, and the pace of writes slowed by level 0.
#[derive(Default)]
pub(crate) struct Writer {
    pub wal: Option<LogWriter>,
    /// The WAL before `wal` (its number and writer), unsynced: a memtable switch does not sync
    /// it, so a synced write syncs it first (a synced write must never survive a crash that loses
    /// writes before it). Dropped at the next switch, which comes after its memtable's flush.
    pub closed_wal: Option<(u64, LogWriter)>,
    /// Whether the current WAL's directory entry is known durable; a synced write makes it so
    /// first (until then nothing in that WAL was promised to survive a crash).
    pub wal_dir_synced: bool,
    /// Under a delayed-write rate ([`crate::options::Options::delayed_write_rate`]), when (on the
    /// Env's clock, nanoseconds) the next slowed write may go: the writes slowed so far, paced at
    /// the rate, have used the time up to here.
    pub delayed_until: u64,
}

pub(crate) struct DbState {
    pub mem: Arc<MemTable>,
    pub imm: Option<Arc<MemTable>>,
    /// The WAL the memtable's writes go to (the writer holds its file).
    pub wal_number: u64,
    pub versions: VersionSet,
    /// Live snapshots: sequence -> count.
    pub snapshots: BTreeMap<SequenceNumber, usize>,
    pub bg_error: Option<Error>,
    pub shutting_down: bool,
    pub closed: bool,
    /// Files being written by a running job, not yet in any version.
    pub pending_outputs: BTreeSet<u64>,
    /// Every installed version; those still alive keep their files from deletion.
    pub live_versions: Vec<Weak<Version>>,
    /// SSTs an edit removed from the current version, deleted once no live version uses them.
    pub obsolete_tables: BTreeSet<u64>,
    /// WALs whose writes are all in SSTs now (older than the live log number).
    pub wal_numbers: BTreeSet<u64>,
    pub stats: DbStats,
    pub lock: Option<Box<dyn FileLock>>,
    /// A job is installing an edit (between its MANIFEST write's start and its commit): another
    /// waits for its turn, so that edits apply one after another (two lanes run jobs under a
    /// flush lane).
    pub installing: bool,
    /// The user-key range of the compaction running now, whose outputs are not installed yet: a
    /// flush on the flush lane that overlaps it goes to level 0.
    pub compacting: Option<(Vec<u8>, Vec<u8>)>,
}

/// A consistent read view; reads through it see the database as of its creation.
pub struct Snapshot {
    inner: Arc<DbInner>,
    seq: SequenceNumber,
}

impl Snapshot {
    pub fn sequence(&self) -> SequenceNumber {
        self.seq
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let mut st = self.inner.lock();
        if let Some(n) = st.snapshots.get_mut(&self.seq) {
            *n -= 1;
            if *n == 0 {
                st.snapshots.remove(&self.seq);
            }
        }
    }
}

impl Db {
    /// Opens (or, with `create_if_missing`, creates) the database in directory `dir` of `env`'s
    /// file system.
    pub fn open(env: Env, dir: &str, options: Options) -> Result<Db> {
        options.validate()?;
        let strategy = options.compaction.strategy();
        let fs = Arc::clone(env.fs());
        let inner = Arc::new(DbInner {
            table_cache: Arc::new(TableCache::new(Arc::clone(&fs), dir, &options)),
            state: Mutex::new(DbState::new(VersionSet::new(Arc::clone(&fs), dir, &options))),
            writer: Mutex::new(Writer::default()),
            dir: dir.to_string(),
            strategy,
            done: Signal::new(),
            install_turn_free: Signal::new(),
            worker: Worker::new(&env),
            flusher: options.flush_lane.then(|| Worker::new(&env)),
            cpu: CpuMeter::new(options.cpu.as_ref()),
            env,
            options,
            imm_pending: AtomicBool::new(false),
        });
        // Work an earlier database left uncharged on this thread is not this one's.
        cpu::discard_pending();
        inner.env.lane_local(&cpu::PENDING_PER_LANE);
        let wal = recovery::open(&inner)?;
        inner.cpu.charge(&inner.env, Lane::Foreground);
        *inner.writer() = Writer { wal: Some(wal), wal_dir_synced: true, ..Writer::default() };
        let bg = Arc::clone(&inner);
        inner.worker.start("flashkv-lsm-bg", move || bg.background_step())?;
        if let Some(flusher) = &inner.flusher {
            let bg = Arc::clone(&inner);
            flusher.start("flashkv-lsm-flush", move || bg.flush_step())?;
        }
        let db = Db { inner };
        db.inner.maybe_schedule(&mut db.inner.lock());
        Ok(db)
    }

    /// Rebuilds the database in `dir` from the SSTs and WALs found there, when CURRENT or the
    /// MANIFEST is lost or damaged; nothing is deleted (see [`RepairReport`] and `db::repair`).
    pub fn repair(env: Env, dir: &str, options: Options) -> Result<RepairReport> {
        repair::repair(env, dir, options)
    }

    pub fn put(&self, opts: &WriteOptions, key: &[u8], value: &[u8]) -> Result<()> {
        // Kind byte and two varint32 lengths of at most 5 bytes each.
        let mut b = WriteBatch::with_capacity(key.len() + value.len() + 11);
        b.put(key, value);
        self.write(opts, b)
    }

    pub fn delete(&self, opts: &WriteOptions, key: &[u8]) -> Result<()> {
        let mut b = WriteBatch::with_capacity(key.len() + 6);
        b.delete(key);
        self.write(opts, b)
    }

    /// Applies `batch` atomically.
    pub fn write(&self, opts: &WriteOptions, batch: WriteBatch) -> Result<()> {
        write::write(&self.inner, opts, batch)
    }

    /// The value of `key`, if it exists.
    pub fn get(&self, opts: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.inner.get(opts, key)
    }

    /// An iterator over the database as it is now (or at `opts.snapshot`), unpositioned.
    pub fn iter(&self, opts: &ReadOptions) -> Result<DbIterator> {
        iter::new_iterator(&self.inner, opts)
    }

    /// The key-value pairs in `range`, in key order.
    pub fn scan(&self, opts: &ReadOptions, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Result<ScanIter> {
        ScanIter::new(self.iter(opts)?, start, end)
    }

    pub fn snapshot(&self) -> Snapshot {
        let mut st = self.inner.lock();
        let seq = st.versions.last_sequence;
        *st.snapshots.entry(seq).or_insert(0) += 1;
        Snapshot { inner: Arc::clone(&self.inner), seq }
    }

    /// Flushes the memtable to an SST now and waits for it.
    pub fn flush(&self) -> Result<()> {
        jobs::flush_now(&self.inner)
    }

    /// Compacts every level's files overlapping the user-key range [begin, end] (`None` =
    /// unbounded) down as far as they go.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        jobs::compact_range(&self.inner, begin, end)
    }

    /// Waits until no flush or compaction is due or running (benchmarks measure a settled tree).
    pub fn wait_for_background(&self) -> Result<()> {
        jobs::wait_idle(&self.inner)
    }

    /// What WAL replay kept and dropped when this database was opened.
    pub fn recovery_report(&self) -> RecoveryReport {
        self.inner.lock().stats.recovery.clone()
    }

    /// The database's statistics. A foreground charge point first (outside the lock): work the
    /// calling thread counted and has not been charged for yet (an open iterator's last steps) is
    /// the foreground's, so the counts returned hold it.
    pub fn stats(&self) -> DbStats {
        self.inner.cpu.charge(&self.inner.env, Lane::Foreground);
        let st = self.inner.lock();
        let mut s = st.stats.clone();
        s.fill_levels(&st.versions.current());
        s.block_cache = self.inner.table_cache.block_cache().stats();
        (s.cpu_foreground, s.cpu_background) = self.inner.cpu.counts();
        s.damaged_filters = self.inner.table_cache.damaged_filters();
        s
    }

    /// LevelDB-style properties: `leveldb.num-files-at-level<N>`, `leveldb.stats`,
    /// `leveldb.sstables`, `leveldb.approximate-memory-usage`.
    pub fn property(&self, name: &str) -> Option<String> {
        let rest = name.strip_prefix("leveldb.")?;
        let st = self.inner.lock();
        let v = st.versions.current();
        if let Some(l) = rest.strip_prefix("num-files-at-level") {
            let level: usize = l.parse().ok()?;
            return (level < v.num_levels()).then(|| v.num_files(level).to_string());
        }
        match rest {
            "stats" => {
                let mut s = st.stats.clone();
                s.fill_levels(&v);
                s.damaged_filters = self.inner.table_cache.damaged_filters();
                Some(s.render())
            }
            "sstables" => {
                let mut out = String::new();
                for (level, files) in v.files.iter().enumerate() {
                    out.push_str(&format!("--- level {level} ---\n"));
                    for f in files {
                        out.push_str(&format!(
                            " {}:{}[{:?} .. {:?}]\n",
                            f.number,
                            f.size,
                            String::from_utf8_lossy(f.smallest_user()),
                            String::from_utf8_lossy(f.largest_user())
                        ));
                    }
                }
                Some(out)
            }
            "approximate-memory-usage" => {
                let mem =
                    st.mem.approximate_memory_usage() + st.imm.as_ref().map_or(0, |m| m.approximate_memory_usage());
                Some(mem.to_string())
            }
            _ => None,
        }
    }

    /// The number of files at each level.
    pub fn files_per_level(&self) -> Vec<usize> {
        let v = self.inner.lock().versions.current();
        (0..v.num_levels()).map(|l| v.num_files(l)).collect()
    }

    /// Closes the database: stops the background worker and waits for it.
    pub fn close(self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&self) -> Result<()> {
        {
            let mut st = self.inner.lock();
            if st.closed {
                return Ok(());
            }
            st.shutting_down = true;
            self.inner.env.notify_all(&self.inner.done);
        }
        // The running jobs finish; writers stalled meanwhile see the shutdown and give up.
        let stopped = self.inner.worker.stop();
        let stopped = match &self.inner.flusher {
            Some(flusher) => stopped.and(flusher.stop()),
            None => stopped,
        };
        self.inner.env.notify_all(&self.inner.done);
        let mut w = self.inner.writer();
        (w.wal, w.closed_wal) = (None, None);
        drop(w);
        let mut st = self.inner.lock();
        st.closed = true;
        st.lock = None;
        Ok(stopped?)
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

impl DbState {
    fn new(versions: VersionSet) -> DbState {
        DbState {
            mem: Arc::new(MemTable::new()),
            imm: None,
            wal_number: 0,
            versions,
            snapshots: BTreeMap::new(),
            bg_error: None,
            shutting_down: false,
            closed: false,
            pending_outputs: BTreeSet::new(),
            live_versions: Vec::new(),
            obsolete_tables: BTreeSet::new(),
            wal_numbers: BTreeSet::new(),
            stats: DbStats::default(),
            lock: None,
            installing: false,
            compacting: None,
        }
    }

    /// Fails with the background error, if a background job has failed: the database takes no
    /// more writes until it is reopened.
    pub fn check_background(&self) -> Result<()> {
        match &self.bg_error {
            Some(e) => Err(Error::Background(Arc::new(e.clone()))),
            None => Ok(()),
        }
    }

    /// The oldest sequence any reader may still need.
    pub fn smallest_snapshot(&self) -> SequenceNumber {
        self.snapshots.keys().next().copied().unwrap_or(self.versions.last_sequence)
    }
}

/// The database's state, locked (see the module doc).
pub(crate) type StateGuard<'a> = Guard<'a, DbState>;

impl DbInner {
    pub fn lock(&self) -> StateGuard<'_> {
        self.env.lock(&self.state)
    }

    pub fn fs(&self) -> &Arc<dyn Fs> {
        self.env.fs()
    }

    /// The WAL; writers take it before the state.
    pub fn writer(&self) -> MutexGuard<'_, Writer> {
        self.writer.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Microseconds since `start` (an [`Env::now_nanos`]) on the Env's clock: the calling lane's
    /// simulated time in simulation (a job's duration is what it held its lane), the wall clock
    /// otherwise.
    pub fn micros_since(&self, start: u64) -> u64 {
        self.env.now_nanos().saturating_sub(start) / 1000
    }

    /// A get, its CPU charged when it ends.
    fn get(&self, opts: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        cpu::count(Term::Get, 1);
        let r = self.lookup(opts, key);
        self.cpu.charge(&self.env, Lane::Foreground);
        r
    }

    fn lookup(&self, opts: &ReadOptions, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let (seq, mem, imm, version) = {
            let st = self.lock();
            if st.closed {
                return Err(Error::Closed);
            }
            let seq = opts.snapshot.unwrap_or(st.versions.last_sequence);
            (seq, Arc::clone(&st.mem), st.imm.clone(), st.versions.current())
        };
        for m in std::iter::once(&mem).chain(imm.as_ref()) {
            match m.get(key, seq) {
                LookupResult::Found(v) => return Ok(Some(v)),
                LookupResult::Deleted => return Ok(None),
                LookupResult::NotFound => {}
            }
        }
        let ikey = internal_key(key, seq, KIND_FOR_SEEK);
        let mut first_searched = None;
        let mut searched = 0;
        let mut result = None;
        for (level, f) in version.files_for_key(key, &ikey) {
            searched += 1;
            cpu::count(Term::TableProbe, 1);
            if first_searched.is_none() {
                first_searched = Some((level, Arc::clone(&f)));
            }
            if let Some((k, v)) = self.table_cache.get(f.number, f.size, &ikey, opts)? {
                let p = crate::key::parse_internal_key(&k).ok_or_else(|| {
                    Error::corruption(crate::filename::table_name(&self.dir, f.number), 0, "malformed key")
                })?;
                if p.user_key == key {
                    result = Some(match p.kind {
                        ValueKind::Value => Some(v),
                        ValueKind::Deletion => None,
                    });
                    break;
                }
            }
        }
        // The first file read gets a seek charge when the lookup had to read more than one file.
        if searched > 1 && self.options.seek_compaction {
            if let Some((level, f)) = first_searched {
                if version.record_seek(&f, level) {
                    self.maybe_schedule(&mut self.lock());
                }
            }
        }
        Ok(result.flatten())
    }
}
