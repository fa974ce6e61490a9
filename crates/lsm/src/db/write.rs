//! The write path: checks, room in the memtable (stalls), WAL append (and sync), memtable insert.
//!
//! Writers are serialised by the WAL's lock ([`Writer`]), taken before the state's. The WAL is
//! appended and synced with the state unlocked, so the background worker (and, in simulated
//! time, its lane) goes on meanwhile; the memtable takes the batch after, and its sequence numbers
//! become visible to readers only then.

use std::sync::Arc;
use std::time::Duration;

use storage::env::{Lane, Wait};

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
    let mut w = inner.writer();
    let st = inner.lock();
    if st.closed {
        return Err(Error::Closed);
    }
    let st = make_room_for_write(inner, &mut w, st, false)?;
    // Only writers move the sequence, and they hold the WAL's lock.
    let seq = st.versions.last_sequence + 1;
    let mem = Arc::clone(&st.mem);
    drop(st);
    // The batch's CPU (encoding, checksum, memtable inserts) goes before its WAL append.
    cpu::count(Term::WriteByte, batch.data().len() as u64);
    cpu::count(Term::Insert, u64::from(batch.count()));
    inner.cpu.charge(&inner.env, Lane::Foreground);
    batch.set_sequence(seq);
    let Writer { wal, wal_dir_synced } = &mut *w;
    let wal = wal.as_mut().ok_or(Error::Closed)?;
    let mut r = wal.add_record(batch.data());
    if r.is_ok() && opts.sync {
        r = wal.sync();
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

/// Makes sure the memtable has room, switching to a new one (and a new WAL) when it is full and
/// waiting where LevelDB would: level 0 at the slowdown trigger (1 ms, once), a previous memtable
/// still being flushed, level 0 at the stop trigger. With `force`, switches even if not full.
pub(super) fn make_room_for_write<'a>(
    inner: &'a DbInner,
    w: &mut Writer,
    mut st: StateGuard<'a>,
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
            st.stats.slowdowns += 1;
            drop(st);
            let t = inner.env.now_nanos();
            inner.env.sleep(SLOWDOWN, Wait::Stall);
            st = inner.lock();
            st.stats.stall_nanos += inner.env.now_nanos().saturating_sub(t);
            continue;
        }
        if !force && st.mem.approximate_memory_usage() <= o.write_buffer_size {
            return Ok(st);
        }
        if st.imm.is_some() {
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
        // loses earlier ones (the unsynced writes that survive are a prefix). Its I/O runs with
        // the state unlocked; no one else switches meanwhile (this writer holds the WAL's lock).
        let number = st.versions.new_file_number();
        // This writer holds the WAL's lock: the next write takes the next sequence.
        let first = st.versions.last_sequence + 1;
        drop(st);
        let path = filename::log_name(&inner.dir, number);
        let opened = (|| -> Result<LogWriter> {
            if let Some(wal) = w.wal.as_mut() {
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
        w.wal = Some(wal);
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

/// Waits for a background job to finish (the worker has been asked for it), and counts the wait.
fn stall<'a>(inner: &'a DbInner, mut st: StateGuard<'a>) -> Result<StateGuard<'a>> {
    let t = inner.env.now_nanos();
    inner.maybe_schedule(&mut st);
    let mut st = inner.env.wait(&inner.done, st, Wait::Stall)?;
    st.stats.stall_nanos += inner.env.now_nanos().saturating_sub(t);
    Ok(st)
}
