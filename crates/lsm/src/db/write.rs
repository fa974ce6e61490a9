//! The write path: checks, room in the memtable (stalls), WAL append (and sync), memtable insert.

use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use flashsim::{Lane, Wait};

use super::{DbInner, DbState};
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::filename;
use crate::key::ValueKind;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::wal::LogWriter;

/// LevelDB slows each write by 1 ms once level 0 reaches the slowdown trigger.
const SLOWDOWN: Duration = Duration::from_millis(1);

pub(super) fn write(inner: &Arc<DbInner>, opts: &WriteOptions, mut batch: WriteBatch) -> Result<()> {
    let o = &inner.options;
    let summary = batch.summary();
    if summary.largest_key > o.max_key_size {
        return Err(Error::KeyTooLarge { len: summary.largest_key, limit: o.max_key_size });
    }
    if summary.largest_value > o.max_value_size {
        return Err(Error::ValueTooLarge { len: summary.largest_value, limit: o.max_value_size });
    }
    let _lane = inner.enter_lane(Lane::Foreground);
    let st = inner.lock();
    if st.closed {
        return Err(Error::Closed);
    }
    let mut st = make_room_for_write(inner, st, false)?;
    let seq = st.versions.last_sequence + 1;
    batch.set_sequence(seq);
    let DbState { wal, wal_dir_synced, .. } = &mut *st;
    let wal = wal.as_mut().ok_or(Error::Closed)?;
    let mut r = wal.add_record(batch.data());
    if r.is_ok() && opts.sync {
        r = wal.sync();
        if r.is_ok() && !*wal_dir_synced {
            r = inner.fs.sync_dir(&inner.dir).map_err(Error::from);
            *wal_dir_synced = r.is_ok();
        }
    }
    if let Err(e) = r {
        // The WAL may now end in a partial record: refuse further writes until reopened.
        st.bg_error.get_or_insert_with(|| e.clone());
        inner.done_cv.notify_all();
        return Err(e);
    }
    st.stats.wal_bytes += batch.data().len() as u64;
    for (i, op) in batch.iter().enumerate() {
        let op = op?;
        st.mem.add(seq + i as u64, op.kind, op.key, op.value);
        if op.kind == ValueKind::Value {
            st.stats.puts += 1;
        } else {
            st.stats.deletes += 1;
        }
    }
    st.versions.last_sequence = seq + batch.count() as u64 - 1;
    st.stats.user_bytes += summary.user_bytes;
    st.stats.writes += 1;
    // No scheduling here: work only becomes due when a memtable is switched or a job installs a
    // version, and those ask for it (as LevelDB's write path).
    drop(st);
    inner.run_inline_jobs();
    Ok(())
}

/// Makes sure the memtable has room, switching to a new one (and a new WAL) when it is full and
/// waiting where LevelDB would: level 0 at the slowdown trigger (1 ms, once), a previous memtable
/// still being flushed, level 0 at the stop trigger. With `force`, switches even if not full.
pub(super) fn make_room_for_write<'a>(
    inner: &'a DbInner,
    mut st: MutexGuard<'a, DbState>,
    mut force: bool,
) -> Result<MutexGuard<'a, DbState>> {
    let o = &inner.options;
    let mut allow_delay = !force;
    loop {
        if let Some(e) = &st.bg_error {
            return Err(Error::Background(Arc::new(e.clone())));
        }
        let l0 = st.versions.current_ref().num_files(0);
        if allow_delay && l0 >= o.l0_slowdown_writes_trigger {
            allow_delay = false;
            st.stats.slowdowns += 1;
            match &inner.sim {
                Some(clock) => {
                    clock.advance(
                        Lane::Foreground,
                        clock.time(Lane::Foreground) + SLOWDOWN.as_nanos() as u64,
                        Wait::Stall,
                    );
                    st.stats.stall_nanos += SLOWDOWN.as_nanos() as u64;
                }
                None => {
                    drop(st);
                    let t = Instant::now();
                    std::thread::sleep(SLOWDOWN);
                    st = inner.lock();
                    st.stats.stall_nanos += t.elapsed().as_nanos() as u64;
                }
            }
            continue;
        }
        if !force && st.mem.approximate_memory_usage() <= o.write_buffer_size {
            return Ok(st);
        }
        let flush_busy =
            st.imm.is_some() || inner.sim.as_ref().is_some_and(|c| c.time(Lane::Foreground) < st.flush_done_at);
        if flush_busy {
            st.stats.memtable_stalls += 1;
            st = stall(inner, st)?;
            continue;
        }
        if l0 >= o.l0_stop_writes_trigger {
            st.stats.l0_stop_stalls += 1;
            st = stall(inner, st)?;
            continue;
        }
        // Switch: the old WAL is synced first so that later writes never survive a crash that
        // loses earlier ones (the unsynced writes that survive are a prefix).
        let number = st.versions.new_file_number();
        let path = filename::log_name(&inner.dir, number);
        let opened = (|| -> Result<LogWriter> {
            if let Some(w) = st.wal.as_mut() {
                w.sync()?;
            }
            // The new WAL's directory entry is made durable by the first synced write into it.
            let f = inner.fs.create_with_hint(&path, storage::WriteHint::Wal)?;
            Ok(LogWriter::new(f))
        })();
        let wal = match opened {
            Ok(w) => w,
            Err(e) => {
                st.bg_error.get_or_insert_with(|| e.clone());
                let _ = inner.fs.remove(&path);
                return Err(e);
            }
        };
        st.wal = Some(wal);
        st.wal_number = number;
        st.wal_dir_synced = false;
        st.wal_numbers.insert(number);
        let full = std::mem::replace(&mut st.mem, Arc::new(MemTable::new()));
        st.imm = Some(full);
        inner.imm_pending.store(true, std::sync::atomic::Ordering::Release);
        force = false;
        inner.maybe_schedule(&mut st);
        if inner.sim.is_some() {
            drop(st);
            inner.run_inline_jobs();
            st = inner.lock();
        }
    }
}

/// Waits for background progress: on a thread, until a job finishes; in simulation, by moving the
/// foreground to the background's time and running the due job inline.
fn stall<'a>(inner: &'a DbInner, mut st: MutexGuard<'a, DbState>) -> Result<MutexGuard<'a, DbState>> {
    match &inner.sim {
        Some(clock) => {
            let fg = clock.time(Lane::Foreground);
            let target = clock.time(Lane::Background).max(st.flush_done_at);
            if target > fg {
                st.stats.stall_nanos += target - fg;
                clock.advance(Lane::Foreground, target, Wait::Stall);
            }
            inner.maybe_schedule(&mut st);
            drop(st);
            let ran = inner.run_inline_jobs();
            let st = inner.lock();
            if !ran && st.imm.is_some() {
                // Nothing could run: report instead of spinning.
                return Err(st
                    .bg_error
                    .clone()
                    .unwrap_or_else(|| Error::InvalidArgument("simulation stalled with no runnable job".into())));
            }
            Ok(st)
        }
        None => {
            let t = Instant::now();
            inner.maybe_schedule(&mut st);
            let mut st = inner.done_cv.wait(st).unwrap_or_else(|e| e.into_inner());
            st.stats.stall_nanos += t.elapsed().as_nanos() as u64;
            Ok(st)
        }
    }
}
