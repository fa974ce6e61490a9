//! Background work: memtable flushes and compactions, run one at a time by the database's
//! [`storage::Worker`] (a thread, or a background lane in simulated time), or under
//! [`crate::Options::flush_lane`] flushes on a second worker of their own; how their results are
//! installed (one edit at a time, whichever lane made it). The files no version needs any more
//! are deleted by `obsolete`.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use storage::env::{Lane, Wait};
use storage::WriteHint;

use super::{DbInner, StateGuard};
use crate::compaction::job::{rewrite_moves, run_compaction, JobEnv, JobStats};
use crate::compaction::observer::{CompactionObserver, PassThrough};
use crate::compaction::output::OutputFile;
use crate::compaction::remapcom::{RemapCom, RemapMode, UdbStats};
use crate::compaction::strategy::PickContext;
use crate::compaction::Compaction;
use crate::cpu::{self, Term};
use crate::error::{Error, Result};
use crate::filename;
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

impl DbInner {
    /// Asks the worker for a step if work is due (a memtable to flush, a level to compact).
    pub(crate) fn maybe_schedule(&self, st: &mut StateGuard<'_>) {
        if st.shutting_down || st.bg_error.is_some() {
            return;
        }
        if st.imm.is_some() {
            self.flusher.as_ref().unwrap_or(&self.worker).request();
        }
        if self.strategy.needs_compaction(st.versions.current_ref(), &self.options.tree_shape()) {
            self.worker.request();
        }
    }

    /// The worker's step: one job, its error recorded as the background error, the files it made
    /// obsolete removed, and the next step asked for if it did something.
    pub(crate) fn background_step(&self) {
        let r = self.background_job();
        self.cpu.charge(&self.env, Lane::Background);
        self.job_ended(r.as_ref().err(), matches!(r, Ok(Step::Ran)));
    }

    /// After a job on the worker: its error recorded as the background error, the files it made
    /// obsolete removed, the next step asked for when `more` may be due, and its waiters woken.
    fn job_ended(&self, error: Option<&Error>, more: bool) {
        let mut st = self.lock();
        if let Some(e) = error {
            st.bg_error.get_or_insert_with(|| e.clone());
        }
        let doomed = self.take_obsolete_files(&mut st);
        if more {
            self.maybe_schedule(&mut st);
        }
        self.env.notify_all(&self.done);
        drop(st);
        self.remove_files(&doomed);
    }

    /// The flush lane's step: flush the immutable memtable if there is one.
    pub(crate) fn flush_step(&self) {
        let imm = {
            let st = self.lock();
            if st.shutting_down || st.bg_error.is_some() {
                None
            } else {
                st.imm.clone()
            }
        };
        let r = match imm {
            Some(imm) => self.flush_memtable(&imm).map(|()| Step::Ran),
            None => Ok(Step::Idle),
        };
        self.cpu.charge(&self.env, Lane::Background);
        self.job_ended(r.as_ref().err(), matches!(r, Ok(Step::Ran)));
    }

    /// One job: flush the immutable memtable if there is one (unless the flush lane does), else
    /// the picker's compaction.
    fn background_job(&self) -> Result<Step> {
        let st = self.lock();
        if st.shutting_down || st.bg_error.is_some() {
            return Ok(Step::Idle);
        }
        if let (Some(imm), None) = (st.imm.clone(), &self.flusher) {
            drop(st);
            return self.flush_memtable(&imm).map(|()| Step::Ran);
        }
        let c = {
            let ctx = PickContext {
                version: &st.versions.current(),
                compact_pointers: &st.versions.compact_pointers,
                shape: self.options.tree_shape(),
            };
            self.strategy.choose(&ctx)
        };
        drop(st);
        match c {
            Some(c) => self.compact(&c).map(|()| Step::Ran),
            None => Ok(Step::Idle),
        }
    }

    /// Writes `imm` to an SST, installs it, and drops the memtable and its WAL. The table goes
    /// as deep as the strategy allows (LevelDB's PickLevelForMemTableOutput), unless a running
    /// compaction's range overlaps it: that compaction's outputs, not yet installed, may span the
    /// gap in a deeper level where the table would otherwise go, so it goes to level 0 (LevelDB
    /// flushes from inside a compaction as from outside).
    fn flush_memtable(&self, imm: &Arc<MemTable>) -> Result<()> {
        let started = self.env.now_nanos();
        let number = {
            let mut st = self.lock();
            let n = st.versions.new_file_number();
            st.pending_outputs.insert(n);
            n
        };
        let built = self.write_table(number, imm, Lane::Background);
        let mut st = self.lock();
        let (size, smallest, largest) = match built {
            Ok(b) => b,
            Err(e) => {
                st.pending_outputs.remove(&number);
                return Err(e);
            }
        };
        // The level is chosen on the version the edit applies to.
        let mut st = match self.install_turn(st) {
            Ok(st) => st,
            Err(e) => {
                self.lock().pending_outputs.remove(&number);
                return Err(e);
            }
        };
        st.pending_outputs.remove(&number);
        let mut edit = VersionEdit::default();
        let mut level = 0;
        if size > 0 {
            let (lo, hi) = (user_key(&smallest), user_key(&largest));
            let outside = st.compacting.as_ref().is_none_or(|(from, to)| hi < from.as_slice() || lo > to.as_slice());
            if outside {
                level = self.strategy.flush_level(st.versions.current_ref(), &self.options.tree_shape(), lo, hi);
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
        s.level_mut(level).micros += self.micros_since(started);
        Ok(())
    }

    /// Flushes the immutable memtable if one is waiting (called from inside a running compaction
    /// on the worker, when there is no flush lane) and wakes the writers that wait for it.
    fn flush_imm_during_job(&self) -> Result<()> {
        if self.flusher.is_some() || !self.imm_pending.load(AtomicOrdering::Acquire) {
            return Ok(());
        }
        let imm = self.lock().imm.clone();
        if let Some(imm) = imm {
            self.flush_memtable(&imm)?;
            self.env.notify_all(&self.done);
        }
        Ok(())
    }

    /// Writes a memtable as SST `number` on `lane`; returns (size, smallest, largest), size 0 if
    /// empty.
    pub(crate) fn write_table(&self, number: u64, mem: &MemTable, lane: Lane) -> Result<(u64, Vec<u8>, Vec<u8>)> {
        let charge = || self.cpu.charge_due(&self.env, lane);
        let r = write_memtable(&**self.fs(), &filename::table_name(&self.dir, number), &self.options, mem, &charge);
        self.cpu.charge(&self.env, lane);
        r
    }

    /// Runs compaction `c` and installs its result.
    pub(crate) fn compact(&self, c: &Compaction) -> Result<()> {
        let started = self.env.now_nanos();
        if c.is_trivial_move() {
            let f = &c.inputs[0][0];
            let mut edit = VersionEdit::default();
            edit.delete_file(c.level, f.number);
            edit.add_file(c.output_level, f.number, f.size, f.smallest.clone(), f.largest.clone());
            if let Some(k) = &c.next_pointer {
                edit.compact_pointers.push((c.level, k.clone()));
            }
            let (mut st, installed) = self.install(self.install_turn(self.lock())?, &mut edit);
            installed?;
            let s = st.stats.level_mut(c.output_level);
            s.bytes_moved += f.size;
            s.moves += 1;
            return Ok(());
        }
        let smallest_snapshot = self.lock().smallest_snapshot();
        // Without a flush lane, a memtable that fills during a long compaction is flushed from
        // inside it (as LevelDB's DoCompactionWork does), so writes do not wait for the whole
        // compaction. The flush's time is its own job's, not the compaction's. The range is what
        // a flush meanwhile, on either lane, must not go deeper beside.
        let files = || c.all_inputs().map(|(_, f)| f).chain(&c.moves);
        let smallest = files().map(|f| f.smallest_user()).min().unwrap_or_default();
        let largest = files().map(|f| f.largest_user()).max().unwrap_or_default();
        let flushing = std::cell::Cell::new(0u64);
        let flush_imm = || {
            let t = self.env.now_nanos();
            let r = self.flush_imm_during_job();
            flushing.set(flushing.get() + self.env.now_nanos().saturating_sub(t));
            r
        };
        let charge = || self.cpu.charge_due(&self.env, Lane::Background);
        let env = JobEnv {
            fs: Arc::clone(self.fs()),
            dir: &self.dir,
            options: &self.options,
            table_cache: &self.table_cache,
            flush_imm: Some(&flush_imm),
            charge: &charge,
        };
        self.lock().compacting = Some((smallest.to_vec(), largest.to_vec()));
        let mut numbered = Vec::new();
        let mut new_number = || {
            let mut st = self.lock();
            let n = st.versions.new_file_number();
            st.pending_outputs.insert(n);
            numbered.push(n);
            n
        };
        // Off is plain LevelDB; any other mode runs RemapCom's state machine over the merge.
        let mut pass = PassThrough;
        let mut remap = RemapCom::new(self.options.remap, self.fs().block_size(), self.options.filter_layout);
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
                            let _ = self.fs().remove(&filename::table_name(&self.dir, o.number));
                        }
                        Err(e)
                    }
                }
            });
        let udb = remap.stats();
        let mut st = self.lock();
        // This job's numbers leave the pending set whatever happens (the flush lane has its own).
        let (outputs, moved, stats) = match result.and_then(|x| Ok((x, self.install_turn(st)?))) {
            Ok((x, turn)) => {
                st = turn;
                x
            }
            Err(e) => {
                let mut st = self.lock();
                st.compacting = None;
                for n in &numbered {
                    st.pending_outputs.remove(n);
                }
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
        st.compacting = None;
        for n in &numbered {
            st.pending_outputs.remove(n);
        }
        installed?;
        let micros = self.micros_since(started).saturating_sub(flushing.get() / 1000);
        record_compaction(&mut st, c, &outputs, &stats, &udb, micros);
        // Obsolete inputs are deleted by the caller once it has dropped `c` (which keeps the input
        // version, and so the inputs, alive).
        Ok(())
    }

    /// Waits until no other job is installing, then holds the turn for the caller's
    /// [`DbInner::install`] (under a flush lane two lanes make edits; each applies to the version
    /// the one before it made). The wait is the MANIFEST write of another lane.
    fn install_turn<'a>(&'a self, mut st: StateGuard<'a>) -> Result<StateGuard<'a>> {
        while st.installing {
            st = self.env.wait(&self.install_turn_free, st, Wait::Metadata)?;
        }
        st.installing = true;
        Ok(st)
    }

    /// Makes new files' directory entries durable, then logs and applies `edit`; the files and
    /// WALs it makes obsolete are queued for deletion. The caller holds the install turn
    /// ([`DbInner::install_turn`]), which this gives back, so no other edit interleaves. The
    /// directory sync and the MANIFEST write run with the lock released, so writers go on meanwhile
    /// (as in LevelDB). Returns the lock again, with the outcome.
    fn install<'a>(&'a self, st: StateGuard<'a>, edit: &mut VersionEdit) -> (StateGuard<'a>, Result<()>) {
        let (mut st, r) = self.install_in_turn(st, edit);
        st.installing = false;
        // Without a flush lane no one waits for the turn (one worker runs every job).
        if self.flusher.is_some() {
            self.env.notify_all(&self.install_turn_free);
        }
        (st, r)
    }

    fn install_in_turn<'a>(&'a self, mut st: StateGuard<'a>, edit: &mut VersionEdit) -> (StateGuard<'a>, Result<()>) {
        debug_assert!(st.installing, "an install without the turn");
        let old_manifest = st.versions.manifest_number;
        let mut write = match st.versions.prepare(edit) {
            Ok(w) => w,
            Err(e) => return (st, Err(e)),
        };
        drop(st);
        let mut r = Ok(());
        if !edit.new_files.is_empty() {
            r = self.fs().sync_dir(&self.dir).map_err(Error::from);
        }
        if r.is_ok() {
            r = write.write();
        }
        if r.is_ok() && write.manifest_number() != Some(old_manifest) && old_manifest != 0 {
            let _ = self.fs().remove(&filename::manifest_name(&self.dir, old_manifest));
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
}

/// Writes `mem` as the SST at `path` and syncs it; returns (size, smallest, largest), size 0 and
/// no file if `mem` is empty. A failed write leaves no file behind. `charge` is a CPU charge point,
/// called after each entry.
pub(crate) fn write_memtable(
    fs: &dyn storage::Fs,
    path: &str,
    options: &crate::options::Options,
    mem: &MemTable,
    charge: &dyn Fn(),
) -> Result<(u64, Vec<u8>, Vec<u8>)> {
    let mut it = mem.iter();
    it.seek_to_first();
    if !it.valid() {
        return Ok((0, Vec::new(), Vec::new()));
    }
    let file = options.create_file(fs, path, WriteHint::Flush)?;
    let mut b = TableBuilder::new(options, file, fs.block_size());
    let r = (|| -> Result<(u64, Vec<u8>, Vec<u8>)> {
        while it.valid() {
            cpu::count(Term::KeyFlushed, 1);
            b.add(it.key(), it.value())?;
            charge();
            it.next();
        }
        let props = b.finish()?;
        Ok((props.file_size, props.smallest_key, props.largest_key))
    })();
    match r {
        Ok(x) => {
            let mut file = b.into_file();
            if let Err(e) = file.sync() {
                let _ = fs.remove(path);
                return Err(e.into());
            }
            Ok(x)
        }
        Err(e) => {
            b.abandon();
            drop(b);
            let _ = fs.remove(path);
            Err(e)
        }
    }
}

fn record_compaction(
    st: &mut super::DbState,
    c: &Compaction,
    outputs: &[OutputFile],
    s: &JobStats,
    udb: &UdbStats,
    micros: u64,
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
    l.micros += micros;
}

impl DbInner {
    /// A manual compaction of `level`'s files overlapping [from, end], on the worker: the largest
    /// user key of its level-`level` inputs, `None` when nothing overlaps.
    fn manual_compaction(&self, level: usize, from: Option<&[u8]>, end: Option<&[u8]>) -> Result<Option<Vec<u8>>> {
        let c = {
            let st = self.lock();
            st.check_background()?;
            let ctx = PickContext {
                version: &st.versions.current(),
                compact_pointers: &st.versions.compact_pointers,
                shape: self.options.tree_shape(),
            };
            self.strategy.choose_range(&ctx, level, from, end)
        };
        let Some(c) = c else { return Ok(None) };
        let r = self.compact(&c);
        self.cpu.charge(&self.env, Lane::Background);
        let last = c.inputs[0].iter().map(|f| f.largest_user().to_vec()).max();
        // The inputs' version goes with `c`, so they can be deleted now.
        drop(c);
        self.job_ended(r.as_ref().err(), true);
        r.map(|()| last)
    }
}

/// `Db::flush`: switches the memtable and waits until it (and an older immutable one) is flushed.
pub(super) fn flush_now(inner: &Arc<DbInner>) -> Result<()> {
    {
        let mut w = inner.writer();
        let st = inner.lock();
        if !st.mem.is_empty() {
            drop(super::write::make_room_for_write(inner, &mut w, st, 0, true)?);
        }
    }
    let mut st = inner.lock();
    loop {
        st.check_background()?;
        if st.imm.is_none() {
            return Ok(());
        }
        if st.shutting_down {
            return Err(Error::Closed);
        }
        inner.maybe_schedule(&mut st);
        st = inner.env.wait(&inner.done, st, Wait::Stall)?;
    }
}

/// `Db::compact_range`: flush, then every level's overlapping files down, level by level, in one
/// pass over the range per level (LevelDB's manual compaction), each compaction run by the worker
/// while the caller waits: level 0's overlapping files in one compaction, deeper levels in
/// compactions whose start moves past the last one's inputs. So it ends even while writers keep
/// adding files; what they add meanwhile is left to the automatic compactions.
pub(super) fn compact_range(inner: &Arc<DbInner>, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
    flush_now(inner)?;
    let levels = inner.options.num_levels;
    let end: Option<Vec<u8>> = end.map(<[u8]>::to_vec);
    for level in 0..levels - 1 {
        let mut from: Option<Vec<u8>> = begin.map(<[u8]>::to_vec);
        loop {
            let (job, start, stop) = (Arc::clone(inner), from.clone(), end.clone());
            let ran = inner.worker.run(move || job.manual_compaction(level, start.as_deref(), stop.as_deref()))??;
            match ran {
                // The pass goes on past these inputs (a file holding `last` itself may still be
                // there, written meanwhile: the pass stops unless it moves forward).
                Some(k) if level > 0 && from.as_ref().is_none_or(|f| k > *f) => from = Some(k),
                _ => break,
            }
        }
    }
    Ok(())
}

/// Waits until no job is due or running.
pub(super) fn wait_idle(inner: &Arc<DbInner>) -> Result<()> {
    {
        let mut st = inner.lock();
        st.check_background()?;
        inner.maybe_schedule(&mut st);
    }
    // Each job asks for the next one it makes due, so an idle worker has nothing left to do.
    // The flush lane's jobs make compactions due, never the other way round: so the flusher
    // first, then the worker.
    if let Some(flusher) = &inner.flusher {
        flusher.wait_idle()?;
    }
    inner.worker.wait_idle()?;
    inner.lock().check_background()
}
