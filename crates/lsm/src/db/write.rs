//! The write path: checks, room in the memtable (stalls), WAL append (and sync), memtable insert.
//!
//! Writers are serialised by the WAL's lock ([`Writer`]), taken before the state's. The WAL is
//! appended and synced with the state unlocked, so the background worker (and, in simulated
//! time, its lane) goes on meanwhile; the memtable takes the batch after, and its sequence numbers
//! become visible to readers only then.

use std::sync::Arc;
use std::time::Duration;

use storage::env::{Lane, Wait};

use super::stats::{DbStats, Stalls};
use super::{DbInner, StateGuard, Writer};
use crate::batch::WriteBatch;
use crate::cpu::{self, Term};
use crate::error::{Error, Result};
use crate::filename;
use crate::key::ValueKind;
use crate::memtable::MemTable;
use crate::options::WriteOptions;
use crate::wal::LogWriter;

/// LevelDB slows each write by 1 ms once level 0 reaches the slowdown trigger.
const LEVELDB_SLOWDOWN: Duration = Duration::from_millis(1);

pub(super) fn write(inner: &Arc<DbInner>, opts: &WriteOptions, mut batch: WriteBatch) -> Result<()> {
    let o = &inner.options;
    let summary = batch.summary();
    if summary.largest_key > o.max_key_size {
        return Err(Error::KeyTooLarge { len: summary.largest_key, limit: o.max_key_size });
    }
    if summary.largest_value > o.max_value_size {
        return Err(Error::ValueTooLarge { len: summary.largest_value, limit: o.max_value_size });
    }
    let mut w = inner.writer();
    let st = inner.lock();
    if st.closed {
        return Err(Error::Closed);
    }
    let st = make_room_for_write(inner, &mut w, st, batch.data().len(), false)?;
    // Only writers move the sequence, and they hold the WAL's lock.
    let seq = st.versions.last_sequence + 1;
    let mem = Arc::clone(&st.mem);
    drop(st);
    // The batch's CPU (encoding, checksum, memtable inserts) goes before its WAL append.
    cpu::count(Term::WriteByte, batch.data().len() as u64);
    cpu::count(Term::Insert, u64::from(batch.count()));
    inner.cpu.charge(&inner.env, Lane::Foreground);
    batch.set_sequence(seq);
    let Writer { wal, closed_wal, wal_dir_synced, .. } = &mut *w;
    let wal = wal.as_mut().ok_or(Error::Closed)?;
    let mut r = wal.add_record(batch.data());
    if r.is_ok() && opts.sync {
        // The writes before this one are made durable first, those of the WAL before this one
        // too. That WAL's sync fails if its flush has deleted it meanwhile; its writes are then
        // in an SST the MANIFEST names (the log number moved past it), which is all that counts.
        if let Some((number, closed)) = closed_wal.as_mut() {
            r = closed.sync().or_else(|e| if inner.lock().versions.log_number > *number { Ok(()) } else { Err(e) });
            if r.is_ok() {
                *closed_wal = None;
            }
        }
        r = r.and_then(|()| wal.sync());
        if r.is_ok() && !*wal_dir_synced {
            r = inner.fs().sync_dir(&inner.dir).map_err(Error::from);
            *wal_dir_synced = r.is_ok();
        }
    }
    if let Err(e) = r {
        // The WAL may now end in a partial record: refuse further writes until reopened.
        let mut st = inner.lock();
        st.bg_error.get_or_insert_with(|| e.clone());
        inner.env.notify_all(&inner.done);
        return Err(e);
    }
    let (mut puts, mut deletes) = (0, 0);
    for (i, op) in batch.iter().enumerate() {
        let op = op?;
        mem.add(seq + i as u64, op.kind, op.key, op.value);
        if op.kind == ValueKind::Value {
            puts += 1;
        } else {
            deletes += 1;
        }
    }
    let mut st = inner.lock();
    st.versions.last_sequence = seq + batch.count() as u64 - 1;
    st.stats.wal_bytes += batch.data().len() as u64;
    st.stats.puts += puts;
    st.stats.deletes += deletes;
    st.stats.user_bytes += summary.user_bytes;
    st.stats.writes += 1;
    // No scheduling here: work only becomes due when a memtable is switched or a job installs a
    // version, and those ask for it (as LevelDB's write path).
    Ok(())
}

/// Makes sure the memtable has room for a write of `bytes`, switching to a new one (and a new
/// WAL) when it is full and waiting where LevelDB would: level 0 at the slowdown trigger (once:
/// [`slowdown`]), a previous memtable still being flushed, level 0 at the stop trigger. With
/// `force`, switches even if not full.
pub(super) fn make_room_for_write<'a>(
    inner: &'a DbInner,
    w: &mut Writer,
    mut st: StateGuard<'a>,
    bytes: usize,
    mut force: bool,
) -> Result<StateGuard<'a>> {
    let o = &inner.options;
    let mut allow_delay = !force;
    loop {
        st.check_background()?;
        if st.shutting_down {
            return Err(Error::Closed);
        }
        let l0 = st.versions.current_ref().num_files(0);
        if allow_delay && l0 >= o.l0_slowdown_writes_trigger {
            allow_delay = false;
            drop(st);
            let t = inner.env.now_nanos();
            let delay = slowdown(o.delayed_write_rate, &mut w.delayed_until, t, bytes);
            if !delay.is_zero() {
                inner.env.sleep(delay, Wait::Stall);
            }
            st = inner.lock();
            if !delay.is_zero() {
                st.stats.slowdowns.add(inner.env.now_nanos().saturating_sub(t));
            }
            continue;
        }
        if !force && st.mem.approximate_memory_usage() <= o.write_buffer_size {
            return Ok(st);
        }
        if st.imm.is_some() {
            st = stall(inner, st, |s| &mut s.memtable_stalls)?;
            continue;
        }
        if l0 >= o.l0_stop_writes_trigger {
            st = stall(inner, st, |s| &mut s.l0_stop_stalls)?;
            continue;
        }
        // Switch. Unless the options ask for it, the old WAL is not synced (as in LevelDB and
        // RocksDB): a crash may keep writes of the new WAL and lose the old one's tail, and
        // replay stops at that break, so the writes that survive are still a prefix. A recovery
        // mode that refuses a break has it synced. The I/O runs with the state unlocked; no one
        // else switches meanwhile (this writer holds the WAL's lock).
        let sync_old = o.sync_closed_wal || !o.wal_recovery_mode.stops_at_breaks();
        let number = st.versions.new_file_number();
        // This writer holds the WAL's lock: the next write takes the next sequence.
        let first = st.versions.last_sequence + 1;
        drop(st);
        let path = filename::log_name(&inner.dir, number);
        let opened = (|| -> Result<LogWriter> {
            if let Some(wal) = w.wal.as_mut().filter(|_| sync_old) {
                wal.sync()?;
            }
            // The new WAL's directory entry is made durable by the first synced write into it.
            let f = inner.options.create_file(&**inner.fs(), &path, storage::WriteHint::Wal)?;
            super::replay::start_wal(f, first)
        })();
        st = inner.lock();
        let wal = match opened {
            Ok(wal) => wal,
            Err(e) => {
                st.bg_error.get_or_insert_with(|| e.clone());
                drop(st);
                let _ = inner.fs().remove(&path);
                return Err(e);
            }
        };
        // The WAL closed before this one belonged to a memtable that has been flushed (a switch
        // waits for that), so it is not needed any more; the one just closed is kept until then
        // for a synced write to sync.
        let closed = w.wal.replace(wal);
        w.closed_wal = closed.filter(|_| !sync_old).map(|wal| (st.wal_number, wal));
        w.wal_dir_synced = false;
        st.wal_number = number;
        st.wal_numbers.insert(number);
        let full = std::mem::replace(&mut st.mem, Arc::new(MemTable::new()));
        st.imm = Some(full);
        inner.imm_pending.store(true, std::sync::atomic::Ordering::Release);
        force = false;
        inner.maybe_schedule(&mut st);
    }
}

/// How long a write of `bytes` made at `now` (nanoseconds on the Env's clock) waits while level 0
/// is at the slowdown trigger. LevelDB's rule (`rate` `None`): 1 ms, whatever the write. Under a
/// rate (RocksDB's `delayed_write_rate`, bytes per second), slowed writes are paced to it: each
/// is due when the slowed writes before it have had their share of time at the rate, so a writer
/// slower than the rate is not held at all and one faster is held to it.
fn slowdown(rate: Option<u64>, delayed_until: &mut u64, now: u64, bytes: usize) -> Duration {
    let Some(rate) = rate.filter(|&r| r > 0) else {
        return LEVELDB_SLOWDOWN;
    };
    let start = (*delayed_until).max(now);
    let share = (bytes as u128 * 1_000_000_000 / u128::from(rate)) as u64;
    *delayed_until = start.saturating_add(share);
    Duration::from_nanos(start - now)
}

/// Waits for a background job to finish (the worker has been asked for it), and counts the wait
/// under its cause.
fn stall<'a>(
    inner: &'a DbInner,
    mut st: StateGuard<'a>,
    cause: fn(&mut DbStats) -> &mut Stalls,
) -> Result<StateGuard<'a>> {
    let t = inner.env.now_nanos();
    inner.maybe_schedule(&mut st);
    let mut st = inner.env.wait(&inner.done, st, Wait::Stall)?;
    cause(&mut st.stats).add(inner.env.now_nanos().saturating_sub(t));
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leveldb_sleeps_a_millisecond_and_a_delayed_write_rate_paces_the_slowed_writes() {
        let mut until = 0;
        assert_eq!(slowdown(None, &mut until, 5_000, 100), Duration::from_millis(1));
        assert_eq!(slowdown(None, &mut until, 5_000, 1 << 20), Duration::from_millis(1), "whatever the size");
        assert_eq!(until, 0);
        // 1 MiB/s: 1 KiB is 976,562 ns of the rate. The first slowed write goes at once.
        let rate = Some(1 << 20);
        assert_eq!(slowdown(rate, &mut until, 1_000, 1024), Duration::ZERO);
        assert_eq!(until, 1_000 + 976_562);
        // The next, 100 us later, waits for the rest of the first's share.
        assert_eq!(slowdown(rate, &mut until, 101_000, 1024), Duration::from_nanos(876_562));
        assert_eq!(until, 1_000 + 2 * 976_562);
        // One made while the writer was already slower than the rate is not held.
        assert_eq!(slowdown(rate, &mut until, 10_000_000, 1024), Duration::ZERO);
        assert_eq!(until, 10_000_000 + 976_562);
        // A rate of 0 is no rate: LevelDB's rule.
        assert_eq!(slowdown(Some(0), &mut until, 20_000_000, 1024), Duration::from_millis(1));
    }
}
