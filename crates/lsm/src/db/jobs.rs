//! Background work: memtable flushes and compactions, how they are scheduled (a thread on real
//! files; inline at deterministic points in simulation), how their results are installed, and the
//! deletion of files no version needs any more.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::{Arc, MutexGuard};

use flashsim::{Lane, Wait};
use storage::WriteHint;

use super::{DbInner, DbState};
use crate::compaction::job::{rewrite_moves, run_compaction, JobEnv, JobStats};
use crate::compaction::observer::{CompactionObserver, PassThrough};
use crate::compaction::output::OutputFile;
use crate::compaction::remapcom::{RemapCom, RemapMode, UdbStats};
use crate::compaction::strategy::PickContext;
use crate::compaction::Compaction;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::iter::InternalIterator;
use crate::key::user_key;
use crate::memtable::MemTable;
use crate::sst::TableBuilder;
use crate::version::VersionEdit;

/// What a background step did.
enum Step {
    Idle,
    Ran,
}

/// Where a flushed memtable may go.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FlushTo {
    /// As deep as LevelDB's PickLevelForMemTableOutput allows.
    Deepest,
    /// Level 0 only: a compaction is running, and its outputs, not yet installed, may span the
    /// gap between two files of a deeper level where the table would otherwise go.
    Level0,
}

impl DbInner {
    /// Asks for background work if some is due (the thread wakes; simulation runs it at the next
    /// `run_inline_jobs`).
    pub(crate) fn maybe_schedule(&self, st: &mut MutexGuard<'_, DbState>) {
        if st.shutting_down || st.bg_error.is_some() {
            return;
        }
        if st.imm.is_some() || self.strategy.needs_compaction(st.versions.current_ref(), &self.options) {
            st.work_requested = true;
            // A wake-up is a system call; a busy thread sees the request when its job ends.
            if st.bg_waiting {
                self.work_cv.notify_one();
            }
        }
    }

    /// Simulation only: runs due jobs while the background lane is idle at the foreground's time.
    /// Returns whether a job ran.
    pub(crate) fn run_inline_jobs(&self) -> bool {
        let Some(clock) = self.sim.clone() else {
            return false;
        };
        let mut ran = false;
        loop {
            {
                let mut st = self.lock();
                if !st.work_requested || st.job_running || st.shutting_down {
                    return ran;
                }
                let fg = clock.time(Lane::Foreground);
                if clock.time(Lane::Background) > fg {
                    // Busy in simulated time: the job starts when a later write finds it idle.
                    return ran;
                }
                clock.advance(Lane::Background, fg, Wait::Idle);
                st.work_requested = false;
            }
            let _lane = self.enter_lane(Lane::Background);
            match self.background_step() {
                Ok(Step::Ran) => ran = true,
                Ok(Step::Idle) => return ran,
                Err(_) => return ran,
            }
            let mut st = self.lock();
            self.maybe_schedule(&mut st);
        }
    }

    /// One job: flush the immutable memtable if there is one, else the picker's compaction.
    /// Errors are recorded as the background error (and returned).
    fn background_step(&self) -> Result<Step> {
        let mut st = self.lock();
        if st.job_running {
            return Ok(Step::Idle);
        }
        st.job_running = true;
        let r = if let Some(imm) = st.imm.clone() {
            drop(st);
            self.flush_memtable(&imm, FlushTo::Deepest).map(|()| Step::Ran)
        } else {
            let c = {
                let ctx = PickContext {
                    version: &st.versions.current(),
                    compact_pointers: &st.versions.compact_pointers,
                    options: &self.options,
                };
                self.strategy.choose(&ctx)
            };
            drop(st);
            match c {
                Some(c) => self.compact(&c).map(|()| Step::Ran),
                None => Ok(Step::Idle),
            }
        };
        let mut st = self.lock();
        st.job_running = false;
        if let Err(e) = &r {
            st.bg_error.get_or_insert_with(|| e.clone());
        }
        let doomed = self.take_obsolete_files(&mut st);
        self.done_cv.notify_all();
        drop(st);
        self.remove_files(&doomed);
        r
    }

    /// Writes `imm` to an SST, installs it, and drops the memtable and its WAL.
    fn flush_memtable(&self, imm: &Arc<MemTable>, to: FlushTo) -> Result<()> {
        let started = self.job_stopwatch();
        let (number, base) = {
            let mut st = self.lock();
            let n = st.versions.new_file_number();
            st.pending_outputs.insert(n);
            (n, st.versions.current())
        };
        let built = self.write_table(number, imm);
        let mut st = self.lock();
        st.pending_outputs.remove(&number);
        let (size, smallest, largest) = built?;
        let mut edit = VersionEdit::default();
        let mut level = 0;
        if size > 0 {
            if to == FlushTo::Deepest {
                level = self.strategy.flush_level(&base, &self.options, user_key(&smallest), user_key(&largest));
            }
            edit.add_file(level, number, size, smallest, largest);
        }
        // The WAL of the current memtable is the oldest one still needed.
        edit.log_number = Some(st.wal_number);
        edit.prev_log_number = Some(0);
        let (mut st, installed) = self.install(st, &mut edit);
        installed?;
        st.imm = None;
        self.imm_pending.store(false, AtomicOrdering::Release);
        let s = &mut st.stats;
        s.flushes += 1;
        s.flush_bytes += size;
        s.level_mut(level).bytes_written += size;
        s.level_mut(level).files_written += (size > 0) as u64;
        s.level_mut(level).micros += started.micros();
        if let Some(c) = &self.sim {
            st.flush_done_at = c.time(Lane::Background);
        }
        Ok(())
    }

    /// Flushes the immutable memtable if one is waiting (called from inside a running job, which
    /// holds the job slot) and wakes the writers that wait for it.
    fn flush_imm_during_job(&self) -> Result<()> {
        if !self.imm_pending.load(AtomicOrdering::Acquire) {
            return Ok(());
        }
        let imm = self.lock().imm.clone();
        if let Some(imm) = imm {
            self.flush_memtable(&imm, FlushTo::Level0)?;
            self.done_cv.notify_all();
        }
        Ok(())
    }

    /// Writes a memtable as SST `number`; returns (size, smallest, largest), size 0 if empty.
    pub(crate) fn write_table(&self, number: u64, mem: &MemTable) -> Result<(u64, Vec<u8>, Vec<u8>)> {
        let mut it = mem.iter();
        it.seek_to_first();
        if !it.valid() {
            return Ok((0, Vec::new(), Vec::new()));
        }
        let path = filename::table_name(&self.dir, number);
        let file = self.fs.create_with_hint(&path, WriteHint::Flush)?;
        let mut b = TableBuilder::new(&self.options, file, self.fs.block_size());
        let r = (|| -> Result<(u64, Vec<u8>, Vec<u8>)> {
            while it.valid() {
                b.add(it.key(), it.value())?;
                it.next();
            }
            let props = b.finish()?;
            Ok((props.file_size, props.smallest_key, props.largest_key))
        })();
        match r {
            Ok(x) => {
                let mut file = b.into_file();
                if let Err(e) = file.sync() {
                    let _ = self.fs.remove(&path);
                    return Err(e.into());
                }
                Ok(x)
            }
            Err(e) => {
                b.abandon();
                drop(b);
                let _ = self.fs.remove(&path);
                Err(e)
            }
        }
    }

    /// Runs compaction `c` and installs its result.
    pub(crate) fn compact(&self, c: &Compaction) -> Result<()> {
        let started = self.job_stopwatch();
        if c.is_trivial_move() {
            let f = &c.inputs[0][0];
            let mut edit = VersionEdit::default();
            edit.delete_file(c.level, f.number);
            edit.add_file(c.output_level, f.number, f.size, f.smallest.clone(), f.largest.clone());
            if let Some(k) = &c.next_pointer {
                edit.compact_pointers.push((c.level, k.clone()));
            }
            let (mut st, installed) = self.install(self.lock(), &mut edit);
            installed?;
            let s = st.stats.level_mut(c.output_level);
            s.bytes_moved += f.size;
            s.moves += 1;
            return Ok(());
        }
        let smallest_snapshot = self.lock().smallest_snapshot();
        // On a thread, a memtable that fills during a long compaction is flushed from inside it
        // (as LevelDB's DoCompactionWork does), so writes do not wait for the whole compaction.
        // In simulation the foreground does not run meanwhile, so there is nothing to flush.
        let flush_imm = || self.flush_imm_during_job();
        let env = JobEnv {
            fs: Arc::clone(&self.fs),
            dir: &self.dir,
            options: &self.options,
            table_cache: &self.table_cache,
            flush_imm: if self.sim.is_none() { Some(&flush_imm) } else { None },
        };
        let mut new_number = || {
            let mut st = self.lock();
            let n = st.versions.new_file_number();
            st.pending_outputs.insert(n);
            n
        };
        // Off is plain LevelDB; any other mode runs RemapCom's state machine over the merge.
        let mut pass = PassThrough;
        let mut remap = RemapCom::new(self.options.remap, self.fs.block_size());
        let observer: &mut dyn CompactionObserver = match self.options.remap {
            RemapMode::Off => &mut pass,
            RemapMode::Base | RemapMode::Full => &mut remap,
        };
        let result =
            run_compaction(&env, c, smallest_snapshot, &mut new_number, observer).and_then(|(outputs, mut stats)| {
                match rewrite_moves(&env, c, &mut new_number) {
                    Ok(moved) => {
                        stats.moved_files = moved.len();
                        stats.moved_bytes = moved.iter().map(|o| o.size).sum();
                        Ok((outputs, moved, stats))
                    }
                    Err(e) => {
                        for o in &outputs {
                            let _ = self.fs.remove(&filename::table_name(&self.dir, o.number));
                        }
                        Err(e)
                    }
                }
            });
        let udb = remap.stats();
        let mut st = self.lock();
        let (outputs, moved, stats) = match result {
            Ok(x) => x,
            Err(e) => {
                st.pending_outputs.clear();
                return Err(e);
            }
        };
        let mut edit = VersionEdit::default();
        for (level, f) in c.all_inputs() {
            edit.delete_file(level, f.number);
        }
        for f in &c.moves {
            edit.delete_file(c.output_level, f.number);
        }
        for o in outputs.iter().chain(&moved) {
            edit.add_file(o.level, o.number, o.size, o.smallest.clone(), o.largest.clone());
        }
        if let Some(k) = &c.next_pointer {
            edit.compact_pointers.push((c.level, k.clone()));
        }
        let (mut st, installed) = self.install(st, &mut edit);
        for o in outputs.iter().chain(&moved) {
            st.pending_outputs.remove(&o.number);
        }
        installed?;
        record_compaction(&mut st, c, &outputs, &stats, &udb, started);
        // Obsolete inputs are deleted by the caller once it has dropped `c` (which keeps the input
        // version, and so the inputs, alive).
        Ok(())
    }

    /// Makes new files' directory entries durable, then logs and applies `edit`; the files and
    /// WALs it makes obsolete are queued for deletion. The directory sync and the MANIFEST write
    /// run with the lock released, so writers go on meanwhile (as in LevelDB); the caller holds the
    /// job slot, so no other edit interleaves. Returns the lock again, with the outcome.
    fn install<'a>(
        &'a self,
        mut st: MutexGuard<'a, DbState>,
        edit: &mut VersionEdit,
    ) -> (MutexGuard<'a, DbState>, Result<()>) {
        let old_manifest = st.versions.manifest_number;
        let mut write = match st.versions.prepare(edit) {
            Ok(w) => w,
            Err(e) => return (st, Err(e)),
        };
        drop(st);
        let mut r = Ok(());
        if !edit.new_files.is_empty() {
            r = self.fs.sync_dir(&self.dir).map_err(Error::from);
        }
        if r.is_ok() {
            r = write.write();
        }
        if r.is_ok() && write.manifest_number() != Some(old_manifest) && old_manifest != 0 {
            let _ = self.fs.remove(&filename::manifest_name(&self.dir, old_manifest));
        }
        let mut st = self.lock();
        let r = st.versions.commit(write, r);
        if r.is_ok() {
            let current = st.versions.current();
            st.live_versions.push(Arc::downgrade(&current));
            for &(_, n) in &edit.deleted_files {
                // A trivial move deletes and adds the same file.
                if !edit.new_files.iter().any(|f| f.number == n) {
                    st.obsolete_tables.insert(n);
                }
            }
        }
        (st, r)
    }

    /// Takes the queued files no live version or running job needs any more (SSTs an edit
    /// removed, WALs older than the live log number) off the books and returns their paths, for
    /// [`DbInner::remove_files`] once the lock is released. Costs nothing when nothing is queued
    /// (this runs after every job; the directory is only scanned at open).
    pub(crate) fn take_obsolete_files(&self, st: &mut DbState) -> Vec<String> {
        let mut doomed = Vec::new();
        let log_number = st.versions.log_number;
        let prev = st.versions.prev_log_number;
        let old_logs: Vec<u64> = st.wal_numbers.iter().copied().filter(|&n| n < log_number && n != prev).collect();
        for n in old_logs {
            st.wal_numbers.remove(&n);
            doomed.push(filename::log_name(&self.dir, n));
        }
        if st.obsolete_tables.is_empty() {
            return doomed;
        }
        st.live_versions.retain(|w| w.strong_count() > 0);
        let mut live = st.versions.live_files();
        for v in st.live_versions.iter().filter_map(|w| w.upgrade()) {
            live.extend(v.files.iter().flatten().map(|f| f.number));
        }
        let dead: Vec<u64> = st.obsolete_tables.iter().copied().filter(|n| !live.contains(n)).collect();
        for n in dead {
            st.obsolete_tables.remove(&n);
            self.table_cache.evict(n);
            doomed.push(filename::table_name(&self.dir, n));
        }
        doomed
    }

    /// Removes files taken by [`DbInner::take_obsolete_files`] (best effort: a file left behind is
    /// removed by the scan at the next open). Call without the lock: unlinking a large file takes a
    /// while.
    pub(crate) fn remove_files(&self, paths: &[String]) {
        for p in paths {
            let _ = self.fs.remove(p);
        }
    }

    /// Scans the directory and removes every file of ours that nothing needs (at open: files left
    /// by a crash between writing and installing, old WALs and MANIFESTs).
    pub(crate) fn delete_unreferenced_files(&self, st: &mut DbState) {
        let mut live = st.versions.live_files();
        live.extend(st.pending_outputs.iter().copied());
        let Ok(names) = self.fs.list(&self.dir) else { return };
        for name in names {
            let keep = match filename::parse(&name) {
                Some(FileKind::Log(n)) => {
                    n >= st.versions.log_number || n == st.versions.prev_log_number || n == st.wal_number
                }
                Some(FileKind::Manifest(n)) => n >= st.versions.manifest_number,
                Some(FileKind::Table(n)) => live.contains(&n),
                Some(FileKind::Temp(n)) => st.pending_outputs.contains(&n),
                Some(FileKind::Current) | Some(FileKind::Lock) | None => true,
            };
            if !keep {
                if let Some(FileKind::Table(n)) = filename::parse(&name) {
                    self.table_cache.evict(n);
                }
                let _ = self.fs.remove(&filename::join(&self.dir, &name));
            }
        }
    }
}

fn record_compaction(
    st: &mut DbState,
    c: &Compaction,
    outputs: &[OutputFile],
    s: &JobStats,
    udb: &UdbStats,
    started: super::JobStopwatch,
) {
    st.stats.compactions += 1;
    // A routed compaction (gear) writes into deeper levels too: each level counts its outputs.
    for o in outputs.iter().filter(|o| o.level != c.output_level) {
        let l = st.stats.level_mut(o.level);
        l.bytes_written += o.size;
        l.passive_bytes += o.size;
        l.files_written += 1;
    }
    let here: Vec<&OutputFile> = outputs.iter().filter(|o| o.level == c.output_level).collect();
    let l = st.stats.level_mut(c.output_level);
    l.compactions += 1;
    l.bytes_read_input_level += s.input_bytes[0];
    l.bytes_read_output_level += s.input_bytes[1];
    l.bytes_written += here.iter().map(|o| o.size).sum::<u64>();
    l.files_written += here.len() as u64;
    l.input_data_blocks += s.input_data_blocks;
    l.output_data_blocks += s.output_data_blocks;
    l.cloned_bytes += s.cloned_bytes;
    l.copied_bytes += s.copied_bytes;
    l.padding_bytes += s.padding_bytes;
    l.short_lived_bytes += s.short_lived_bytes;
    l.move_rewrites += s.moved_files as u64;
    l.move_rewrite_bytes += s.moved_bytes;
    l.bytes_written += s.moved_bytes;
    l.entries_dropped += s.entries_dropped;
    l.add_udb_stats(udb);
    l.micros += started.micros();
}

/// The background thread: waits for work, runs one job at a time, until shutdown.
pub(super) fn background_thread(inner: &Arc<DbInner>) {
    loop {
        {
            let mut st = inner.lock();
            loop {
                if st.shutting_down {
                    inner.done_cv.notify_all();
                    return;
                }
                // Another caller holds the slot, or a manual one waits for it (a flush still goes
                // first): wait for the slot's release rather than spin.
                let yield_slot = st.job_running || (st.manual_waiting > 0 && st.imm.is_none());
                if st.work_requested && !yield_slot {
                    break;
                }
                if yield_slot {
                    st = inner.done_cv.wait(st).unwrap_or_else(|e| e.into_inner());
                } else {
                    st.bg_waiting = true;
                    st = inner.work_cv.wait(st).unwrap_or_else(|e| e.into_inner());
                    st.bg_waiting = false;
                }
            }
            st.work_requested = false;
        }
        let r = inner.background_step();
        let mut st = inner.lock();
        if r.is_ok() {
            inner.maybe_schedule(&mut st);
        }
        inner.done_cv.notify_all();
    }
}

/// Waits until no job runs (threads) and takes the job slot for the caller.
fn acquire_job_slot(inner: &DbInner) -> Result<MutexGuard<'_, DbState>> {
    let mut st = inner.lock();
    st.manual_waiting += 1;
    while st.job_running {
        st = inner.done_cv.wait(st).unwrap_or_else(|e| e.into_inner());
    }
    st.manual_waiting -= 1;
    if st.closed {
        return Err(Error::Closed);
    }
    st.job_running = true;
    Ok(st)
}

fn release_job_slot(inner: &DbInner, r: &Result<()>) {
    let mut st = inner.lock();
    st.job_running = false;
    if let Err(e) = r {
        st.bg_error.get_or_insert_with(|| e.clone());
    }
    let doomed = inner.take_obsolete_files(&mut st);
    inner.maybe_schedule(&mut st);
    inner.done_cv.notify_all();
    drop(st);
    inner.remove_files(&doomed);
}

/// `Db::flush`: switches the memtable and flushes it (and an older immutable one) now.
pub(super) fn flush_now(inner: &Arc<DbInner>) -> Result<()> {
    let _lane = inner.enter_lane(Lane::Foreground);
    {
        let st = inner.lock();
        if st.mem.is_empty() {
            drop(st);
            return flush_pending(inner);
        }
        let st = super::write::make_room_for_write(inner, st, true)?;
        drop(st);
    }
    flush_pending(inner)
}

/// Flushes the immutable memtable, if any, on the calling thread (in the background lane).
fn flush_pending(inner: &Arc<DbInner>) -> Result<()> {
    let st = acquire_job_slot(inner)?;
    let imm = st.imm.clone();
    drop(st);
    let r = match imm {
        Some(m) => {
            let _lane = inner.background_lane_now();
            inner.flush_memtable(&m, FlushTo::Deepest)
        }
        None => Ok(()),
    };
    release_job_slot(inner, &r);
    inner.run_inline_jobs();
    r
}

/// `Db::compact_range`: flush, then every level's overlapping files down, level by level, in one
/// pass over the range per level (LevelDB's manual compaction): level 0's overlapping files in
/// one compaction, deeper levels in compactions whose start moves past the last one's inputs. So
/// it ends even while writers keep adding files; what they add meanwhile is left to the
/// automatic compactions.
pub(super) fn compact_range(inner: &Arc<DbInner>, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
    flush_now(inner)?;
    let levels = inner.options.num_levels;
    for level in 0..levels - 1 {
        let mut from: Option<Vec<u8>> = begin.map(<[u8]>::to_vec);
        loop {
            let st = acquire_job_slot(inner)?;
            let c = {
                let ctx = PickContext {
                    version: &st.versions.current(),
                    compact_pointers: &st.versions.compact_pointers,
                    options: &inner.options,
                };
                inner.strategy.choose_range(&ctx, level, from.as_deref(), end)
            };
            drop(st);
            let Some(c) = c else {
                release_job_slot(inner, &Ok(()));
                break;
            };
            let r = {
                let _lane = inner.background_lane_now();
                inner.compact(&c)
            };
            let last = c.inputs[0].iter().map(|f| f.largest_user().to_vec()).max();
            drop(c);
            release_job_slot(inner, &r);
            r?;
            match last {
                // The pass goes on past these inputs (a file holding `last` itself may still be
                // there, written meanwhile: the pass stops unless it moves forward).
                Some(k) if level > 0 && from.as_ref().is_none_or(|f| k > *f) => from = Some(k),
                _ => break,
            }
        }
    }
    inner.run_inline_jobs();
    Ok(())
}

/// Waits until no job is due or running.
pub(super) fn wait_idle(inner: &Arc<DbInner>) -> Result<()> {
    if let Some(clock) = &inner.sim {
        // Let simulated time pass until the background has caught up with everything due.
        loop {
            {
                let mut st = inner.lock();
                if let Some(e) = &st.bg_error {
                    return Err(Error::Background(Arc::new(e.clone())));
                }
                inner.maybe_schedule(&mut st);
                if !st.work_requested {
                    return Ok(());
                }
            }
            let bg = clock.time(Lane::Background);
            clock.advance(Lane::Foreground, bg, Wait::Stall);
            if !inner.run_inline_jobs() {
                return Ok(());
            }
        }
    }
    let mut st = inner.lock();
    loop {
        if let Some(e) = &st.bg_error {
            return Err(Error::Background(Arc::new(e.clone())));
        }
        inner.maybe_schedule(&mut st);
        if !st.work_requested && !st.job_running {
            return Ok(());
        }
        st = inner.done_cv.wait(st).unwrap_or_else(|e| e.into_inner());
    }
}

impl DbInner {
    /// In simulation: the background lane, starting no earlier than the foreground's now.
    pub(crate) fn background_lane_now(&self) -> super::LaneGuard {
        if let Some(c) = &self.sim {
            c.advance(Lane::Background, c.time(Lane::Foreground), Wait::Idle);
        }
        self.enter_lane(Lane::Background)
    }
}
