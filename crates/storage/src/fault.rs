//! `FaultFs`: wraps any [`Fs`] and injects errors, after RocksDB's FaultInjectionTestFS and Pebble's errorfs.
//!
//! Every operation belongs to one [`IoClass`]: `Read` (reads), `Write` (append, flush, clone_range,
//! append_cloned), `Sync` (file sync, sync_dir) or `Metadata` (create, open, open_append, file_size, exists, list,
//! create_dir_all, remove_dir, rename, remove, lock, and a reader's `size`). Before an operation runs, the wrapper
//! counts it in its class and decides whether it fails:
//! - a schedule: [`FaultFs::fail_nth`]`(class, n)` fails the n-th operation of `class` counted from the call;
//! - a probability per class ([`FaultFs::set_probability`]), drawn from a PCG generator seeded at construction, so
//!   the same seed and the same sequence of operations inject the same faults.
//!
//! A failed operation returns [`FsError::Injected`] naming the class, the operation and the path, and does not reach
//! the inner file system, except a *torn write*: with probability [`FaultFs::set_torn_writes`] a failed append first
//! appends a random prefix of its data to the inner file and syncs it (as if power failed mid-write), then fails.
//! Only appends tear; a failed flush, sync or clone changes nothing.
//! [`FaultFs::set_enabled`]`(false)` stops all injection (operations are still counted, and a scheduled operation
//! that passes while disabled is not failed later). Wrapping a [`crate::MemFs`] keeps its `crash()` usable: hold a
//! clone of the `MemFs`.

use std::fmt;
use std::sync::{Arc, Mutex};

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

use crate::error::{FsError, Result};
use crate::fs::CloneOutcome;
use crate::fs::{FileLock, Fs, RandomAccessFile, WritableFile, WriteHint};
use crate::io_class::IoClass;
use crate::lock_unpoisoned as lock;

impl fmt::Display for IoClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            IoClass::Read => "read",
            IoClass::Write => "write",
            IoClass::Sync => "sync",
            IoClass::Metadata => "metadata",
        };
        f.write_str(name)
    }
}

/// Counters of a [`FaultFs`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultStats {
    ops: [u64; 4],
    injected: [u64; 4],
    /// Injected appends that persisted a prefix.
    pub torn_writes: u64,
}

impl FaultStats {
    /// Operations of `class` seen so far.
    pub fn ops(&self, class: IoClass) -> u64 {
        self.ops[class.index()]
    }

    /// Faults injected into operations of `class`.
    pub fn injected(&self, class: IoClass) -> u64 {
        self.injected[class.index()]
    }

    /// Faults injected in all classes.
    pub fn total_injected(&self) -> u64 {
        self.injected.iter().sum()
    }
}

struct FaultState {
    rng: Pcg64,
    enabled: bool,
    probability: [f64; 4],
    torn_probability: f64,
    /// Per class, the (1-based) operation numbers that must fail.
    scheduled: [Vec<u64>; 4],
    stats: FaultStats,
}

enum Decision {
    Pass,
    Fail,
    Torn,
}

impl FaultState {
    fn decide(&mut self, class: IoClass, tearable: bool) -> Decision {
        let i = class.index();
        self.stats.ops[i] += 1;
        let n = self.stats.ops[i];
        let scheduled = match self.scheduled[i].iter().position(|&k| k == n) {
            Some(pos) => {
                self.scheduled[i].swap_remove(pos);
                true
            }
            None => false,
        };
        if !self.enabled {
            return Decision::Pass;
        }
        let p = self.probability[i];
        let drawn = p > 0.0 && self.rng.random_bool(p);
        if !(scheduled || drawn) {
            return Decision::Pass;
        }
        self.stats.injected[i] += 1;
        let tp = self.torn_probability;
        if tearable && tp > 0.0 && self.rng.random_bool(tp) {
            self.stats.torn_writes += 1;
            Decision::Torn
        } else {
            Decision::Fail
        }
    }
}

/// Counts one operation and fails it if a fault is due.
fn check(state: &Mutex<FaultState>, class: IoClass, op: &'static str, path: &str) -> Result<()> {
    match lock(state).decide(class, false) {
        Decision::Pass => Ok(()),
        Decision::Torn | Decision::Fail => Err(injected(class, op, path)),
    }
}

/// [`check`] for an append, which may be torn: `Ok(false)` to run it, `Ok(true)` to tear it.
fn check_append(state: &Mutex<FaultState>, path: &str) -> Result<bool> {
    match lock(state).decide(IoClass::Write, true) {
        Decision::Pass => Ok(false),
        Decision::Torn => Ok(true),
        Decision::Fail => Err(injected(IoClass::Write, "append", path)),
    }
}

fn injected(class: IoClass, op: &'static str, path: &str) -> FsError {
    FsError::Injected { class, op, path: path.to_string() }
}

/// A file system that injects faults into another; cloning the handle shares the fault state.
#[derive(Clone)]
pub struct FaultFs {
    inner: Arc<dyn Fs>,
    state: Arc<Mutex<FaultState>>,
}

impl FaultFs {
    /// Wraps `inner` with injection enabled but nothing scheduled and all probabilities zero.
    pub fn new(inner: Arc<dyn Fs>, seed: u64) -> FaultFs {
        let state = FaultState {
            rng: Pcg64::seed_from_u64(seed),
            enabled: true,
            probability: [0.0; 4],
            torn_probability: 0.0,
            scheduled: Default::default(),
            stats: FaultStats::default(),
        };
        FaultFs { inner, state: Arc::new(Mutex::new(state)) }
    }

    /// The wrapped file system.
    pub fn inner(&self) -> &Arc<dyn Fs> {
        &self.inner
    }

    /// Each operation of `class` fails with probability `p` (clamped to 0..=1).
    pub fn set_probability(&self, class: IoClass, p: f64) {
        let p = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
        lock(&self.state).probability[class.index()] = p;
    }

    /// The `n`-th operation of `class` from now (`n` >= 1; 1 is the next one) fails.
    pub fn fail_nth(&self, class: IoClass, n: u64) {
        let mut s = lock(&self.state);
        let at = s.stats.ops[class.index()] + n.max(1);
        s.scheduled[class.index()].push(at);
    }

    /// An injected append failure is torn (persists a random prefix) with probability `p` (clamped to 0..=1).
    pub fn set_torn_writes(&self, p: f64) {
        lock(&self.state).torn_probability = if p.is_nan() { 0.0 } else { p.clamp(0.0, 1.0) };
    }

    /// Switches injection on or off.
    pub fn set_enabled(&self, on: bool) {
        lock(&self.state).enabled = on;
    }

    /// Whether injection is on.
    pub fn enabled(&self) -> bool {
        lock(&self.state).enabled
    }

    /// Forgets all schedules and sets every probability to zero.
    pub fn clear(&self) {
        let mut s = lock(&self.state);
        s.probability = [0.0; 4];
        s.torn_probability = 0.0;
        s.scheduled = Default::default();
    }

    /// The counters so far.
    pub fn stats(&self) -> FaultStats {
        lock(&self.state).stats
    }

    fn meta(&self, op: &'static str, path: &str) -> Result<()> {
        check(&self.state, IoClass::Metadata, op, path)
    }

    fn wrap_writer(&self, inner: Box<dyn WritableFile>) -> Box<dyn WritableFile> {
        Box::new(FaultWriter { inner, state: Arc::clone(&self.state) })
    }
}

impl fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultFs").field("inner", &self.inner).field("stats", &self.stats()).finish()
    }
}

impl Fs for FaultFs {
    fn block_size(&self) -> u64 {
        self.inner.block_size()
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.create_with_hint(path, WriteHint::None)
    }

    fn create_with_hint(&self, path: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        self.meta("create", path)?;
        Ok(self.wrap_writer(self.inner.create_with_hint(path, hint)?))
    }

    fn create_direct(&self, path: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        self.meta("create", path)?;
        Ok(self.wrap_writer(self.inner.create_direct(path, hint)?))
    }

    fn open_append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.meta("open_append", path)?;
        Ok(self.wrap_writer(self.inner.open_append(path)?))
    }

    fn open(&self, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        self.meta("open", path)?;
        let inner = self.inner.open(path)?;
        Ok(Box::new(FaultReader { inner, state: Arc::clone(&self.state) }))
    }

    fn open_direct(&self, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        self.meta("open", path)?;
        let inner = self.inner.open_direct(path)?;
        Ok(Box::new(FaultReader { inner, state: Arc::clone(&self.state) }))
    }

    fn file_size(&self, path: &str) -> Result<u64> {
        self.meta("file_size", path)?;
        self.inner.file_size(path)
    }

    fn exists(&self, path: &str) -> Result<bool> {
        self.meta("exists", path)?;
        self.inner.exists(path)
    }

    fn list(&self, dir: &str) -> Result<Vec<String>> {
        self.meta("list", dir)?;
        self.inner.list(dir)
    }

    fn create_dir_all(&self, dir: &str) -> Result<()> {
        self.meta("create_dir_all", dir)?;
        self.inner.create_dir_all(dir)
    }

    fn remove_dir(&self, dir: &str) -> Result<()> {
        self.meta("remove_dir", dir)?;
        self.inner.remove_dir(dir)
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.meta("rename", from)?;
        self.inner.rename(from, to)
    }

    fn remove(&self, path: &str) -> Result<()> {
        self.meta("remove", path)?;
        self.inner.remove(path)
    }

    fn sync_dir(&self, dir: &str) -> Result<()> {
        check(&self.state, IoClass::Sync, "sync_dir", dir)?;
        self.inner.sync_dir(dir)
    }

    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        self.meta("lock", path)?;
        self.inner.lock(path)
    }

    fn clone_range(&self, src: &str, src_offset: u64, dst: &str, dst_offset: u64, len: u64) -> Result<()> {
        check(&self.state, IoClass::Write, "clone_range", dst)?;
        self.inner.clone_range(src, src_offset, dst, dst_offset, len)
    }

    fn supports_clone(&self) -> bool {
        self.inner.supports_clone()
    }

    fn clock(&self) -> Option<flashsim::SimClock> {
        self.inner.clock()
    }
}

struct FaultWriter {
    inner: Box<dyn WritableFile>,
    state: Arc<Mutex<FaultState>>,
}

impl WritableFile for FaultWriter {
    fn path(&self) -> &str {
        self.inner.path()
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn append(&mut self, data: &[u8]) -> Result<()> {
        if check_append(&self.state, self.inner.path())? {
            let keep = if data.is_empty() { 0 } else { lock(&self.state).rng.random_range(0..data.len()) };
            // Best effort: the point is the partial state left behind, and the caller gets the injected error.
            let _ = self.inner.append(&data[..keep]).and_then(|()| self.inner.sync());
            return Err(injected(IoClass::Write, "append", self.inner.path()));
        }
        self.inner.append(data)
    }

    fn flush(&mut self) -> Result<()> {
        check(&self.state, IoClass::Write, "flush", self.inner.path())?;
        self.inner.flush()
    }

    fn sync(&mut self) -> Result<()> {
        check(&self.state, IoClass::Sync, "sync", self.inner.path())?;
        self.inner.sync()
    }

    fn discard_buffered(&mut self) {
        self.inner.discard_buffered()
    }

    fn append_cloned(&mut self, src: &str, src_offset: u64, len: u64) -> Result<CloneOutcome> {
        check(&self.state, IoClass::Write, "append_cloned", self.inner.path())?;
        self.inner.append_cloned(src, src_offset, len)
    }
}

struct FaultReader {
    inner: Box<dyn RandomAccessFile>,
    state: Arc<Mutex<FaultState>>,
}

impl RandomAccessFile for FaultReader {
    fn path(&self) -> &str {
        self.inner.path()
    }

    fn size(&self) -> Result<u64> {
        check(&self.state, IoClass::Metadata, "size", self.inner.path())?;
        self.inner.size()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        check(&self.state, IoClass::Read, "read_at", self.inner.path())?;
        self.inner.read_at(offset, buf)
    }
}
