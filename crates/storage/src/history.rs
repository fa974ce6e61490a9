//! Random histories of file operations and crashes, run on crashable file systems and checked against a model.
//!
//! The model is the crash contract written as plainly as possible (see [`crate::mem`] for the words): directory
//! entries revert to the entries at their directory's last `sync_dir`, and every surviving file reverts to a copy of
//! its bytes taken at its last `sync`. [`check_history`] applies each [`Op`] to the model and to every [`Subject`]
//! (MemFs; the lead adds SimFs), and after each operation compares what each subject shows (every file's bytes, and
//! every open writer's length) with the model, so a history that breaks the contract fails at the first operation
//! where it shows, naming the operation, the subject and the file.
//!
//! Operation fields are taken modulo what exists, so any value of an [`Op`] is valid (which lets proptest shrink
//! freely); an operation that does not apply (appending to a file that does not exist) is skipped by all alike.
//! Subjects must support `clone_range` (the harness clones into the middle of files). Before every operation
//! that reads another file, and before each comparison, the harness flushes all open writers.

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

use crate::conformance::pattern;
use crate::error::FsError;
use crate::fs::{read_all, Fs, WritableFile};
use crate::mem::MemFs;

/// The files a history works on: three in each of two directories, so renames cross directories too.
pub const FILES: [&str; 6] = ["a/0", "a/1", "a/2", "b/0", "b/1", "b/2"];

/// The directories of [`FILES`].
pub const DIRS: [&str; 2] = ["a", "b"];

/// One step of a history. Indices are taken modulo the number of files, directories or blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Create (or truncate) a file and keep a writer open on it.
    Create { file: u8 },
    /// Append `len % 8192` pattern bytes (opening a writer if none is open).
    Append { file: u8, len: u16, seed: u8 },
    /// Sync the file (opening a writer if none is open).
    Sync { file: u8 },
    /// Flush and close the file's writer.
    Close { file: u8 },
    /// Sync a directory.
    SyncDir { dir: u8 },
    /// Rename one file over another (their writers are closed first).
    Rename { from: u8, to: u8 },
    /// Remove a file (its writer is closed first).
    Remove { file: u8 },
    /// Pad `dst` to a block boundary, then `append_cloned` 1 to 3 whole blocks of `src`.
    AppendCloned { src: u8, dst: u8, block: u8, blocks: u8 },
    /// `clone_range` one block of `src` over a block of `dst` (or at its end); `dst`'s writer is closed first.
    CloneInto { src: u8, dst: u8, src_block: u8, dst_block: u8 },
    /// Simulated power loss: every handle is lost.
    Crash,
}

/// Where a subject and the model parted: the step, the subject, what it was doing or comparing, and
/// the file system's error or the difference.
#[derive(Debug, thiserror::Error)]
#[error("{step}{subject}: {what}: {problem}")]
pub struct HistoryError {
    pub step: Step,
    /// The subject's name.
    pub subject: String,
    /// The operation on the subject (`append`, `sync_dir`, ...) or the file compared.
    pub what: String,
    pub problem: Problem,
}

/// When in a history a [`HistoryError`] happened.
#[derive(Debug)]
pub enum Step {
    /// Making the directories, before the first operation.
    Setup,
    /// Applying operation `index`.
    Op { index: usize, op: Op },
    /// Comparing the subject with the model after operation `index`.
    After { index: usize, op: Op },
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Setup => Ok(()),
            Step::Op { index, op } => write!(f, "op {index} {op:?}: "),
            Step::After { index, op } => write!(f, "after op {index} {op:?}: "),
        }
    }
}

/// What went wrong at a [`Step`].
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    /// The subject's file system failed an operation the model allows (boxed: an `FsError` is
    /// larger than the rest of the error).
    #[error(transparent)]
    Fs(Box<FsError>),
    /// The subject shows other files, bytes or lengths than the model.
    #[error("{0}")]
    Differs(String),
}

impl From<FsError> for Problem {
    fn from(e: FsError) -> Problem {
        Problem::Fs(Box::new(e))
    }
}

/// A crashable file system under test.
pub struct Subject {
    /// How failures name it.
    pub name: String,
    /// The file system.
    pub fs: Arc<dyn Fs>,
    /// Simulates power loss on it.
    pub crash: Box<dyn Fn()>,
}

impl Subject {
    /// A MemFs subject.
    pub fn mem(mem: MemFs) -> Subject {
        let crash_handle = mem.clone();
        Subject { name: "MemFs".into(), fs: Arc::new(mem), crash: Box::new(move || crash_handle.crash()) }
    }
}

/// A history of `len` operations drawn from `seed`.
pub fn random_history(seed: u64, len: usize) -> Vec<Op> {
    let mut rng = Pcg64::seed_from_u64(seed);
    (0..len)
        .map(|_| {
            let f = rng.random::<u8>();
            let g = rng.random::<u8>();
            let (h, k) = (rng.random::<u8>(), rng.random::<u8>());
            match rng.random_range(0..100u32) {
                0..=29 => Op::Append { file: f, len: rng.random::<u16>(), seed: g },
                30..=44 => Op::Sync { file: f },
                45..=52 => Op::Create { file: f },
                53..=62 => Op::SyncDir { dir: f },
                63..=66 => Op::Close { file: f },
                67..=72 => Op::Rename { from: f, to: g },
                73..=76 => Op::Remove { file: f },
                77..=88 => Op::AppendCloned { src: f, dst: g, block: h, blocks: k },
                89..=96 => Op::CloneInto { src: f, dst: g, src_block: h, dst_block: k },
                _ => Op::Crash,
            }
        })
        .collect()
}

#[derive(Clone, Default)]
struct Node {
    bytes: Vec<u8>,
    synced: Vec<u8>,
}

#[derive(Default)]
struct Model {
    nodes: Vec<Node>,
    entries: BTreeMap<usize, usize>,
    durable: BTreeMap<usize, usize>,
}

impl Model {
    fn node(&self, f: usize) -> Option<&Node> {
        self.entries.get(&f).map(|&n| &self.nodes[n])
    }

    fn node_mut(&mut self, f: usize) -> &mut Node {
        let n = self.entries.get(&f).copied().unwrap_or_else(|| panic!("model: {} has no node", FILES[f]));
        &mut self.nodes[n]
    }

    fn len(&self, f: usize) -> usize {
        self.node(f).map_or(0, |n| n.bytes.len())
    }

    /// The directory's names take their current nodes; a node that moved here from another directory leaves its
    /// old durable name, and a node that moved from here to another directory takes its new name there.
    fn sync_dir(&mut self, d: usize) {
        for p in (0..FILES.len()).filter(|&p| dir_of(p) == d) {
            let (new, old) = (self.entries.get(&p).copied(), self.durable.get(&p).copied());
            if new == old {
                continue;
            }
            if let Some(x) = new {
                let entries = &self.entries;
                self.durable.retain(|&q, &mut n| n != x || q == p || entries.get(&q) == Some(&x));
            }
            if let Some(y) = old {
                let moved_to = self.entries.iter().find(|(_, &n)| n == y).map(|(&q, _)| q);
                if let Some(q) = moved_to.filter(|&q| dir_of(q) != d) {
                    self.durable.insert(q, y);
                }
            }
            match new {
                Some(x) => self.durable.insert(p, x),
                None => self.durable.remove(&p),
            };
        }
    }

    fn crash(&mut self) {
        self.entries = self.durable.clone();
        for node in &mut self.nodes {
            node.bytes = node.synced.clone();
        }
    }
}

fn dir_of(f: usize) -> usize {
    f / 3
}

struct Run {
    subject: Subject,
    writers: Vec<Option<Box<dyn WritableFile>>>,
}

type Outcome = std::result::Result<(), HistoryError>;

impl Run {
    /// An error of this subject's, at a step [`check_history`] fills in.
    fn fail(&self, what: &str, problem: impl Into<Problem>) -> HistoryError {
        HistoryError {
            step: Step::Setup,
            subject: self.subject.name.clone(),
            what: what.into(),
            problem: problem.into(),
        }
    }

    fn writer(&mut self, f: usize) -> std::result::Result<&mut Box<dyn WritableFile>, HistoryError> {
        if self.writers[f].is_none() {
            let w = self.subject.fs.open_append(FILES[f]).map_err(|e| self.fail("open_append", e))?;
            self.writers[f] = Some(w);
        }
        let vanished = self.fail(FILES[f], Problem::Differs("the writer just opened vanished".into()));
        self.writers[f].as_mut().ok_or(vanished)
    }

    fn close(&mut self, f: usize) -> Outcome {
        if let Some(mut w) = self.writers[f].take() {
            w.flush().map_err(|e| self.fail("flush before close", e))?;
        }
        Ok(())
    }

    fn flush_all(&mut self) -> Outcome {
        let subject = &self.subject.name;
        for (f, w) in self.writers.iter_mut().enumerate() {
            if let Some(w) = w.as_mut() {
                w.flush().map_err(|e| HistoryError {
                    step: Step::Setup,
                    subject: subject.clone(),
                    what: format!("flush {}", FILES[f]),
                    problem: e.into(),
                })?;
            }
        }
        Ok(())
    }

    /// Compares every file's bytes and every open writer's length with the model.
    fn compare(&mut self, model: &Model) -> Outcome {
        self.flush_all()?;
        let fs = Arc::clone(&self.subject.fs);
        let mut seen = Vec::new();
        for dir in DIRS {
            for name in fs.list(dir).map_err(|e| self.fail("list", e))? {
                seen.push(format!("{dir}/{name}"));
            }
        }
        let want: Vec<String> = model.entries.keys().map(|&f| FILES[f].to_string()).collect();
        if seen != want {
            return Err(self.fail("files", Problem::Differs(format!("found {seen:?}, model has {want:?}"))));
        }
        for (&f, &n) in &model.entries {
            let got = read_all(&*fs, FILES[f]).map_err(|e| self.fail("read_all", e))?;
            let expected = &model.nodes[n].bytes;
            if &got != expected {
                let at = got.iter().zip(expected).position(|(a, b)| a != b).unwrap_or(got.len().min(expected.len()));
                let differs = format!("{} bytes, model has {}; first difference at {at}", got.len(), expected.len());
                return Err(self.fail(FILES[f], Problem::Differs(differs)));
            }
            if let Some(w) = &self.writers[f] {
                if w.len() != expected.len() as u64 {
                    let differs = format!("writer len {} != {}", w.len(), expected.len());
                    return Err(self.fail(FILES[f], Problem::Differs(differs)));
                }
            }
        }
        Ok(())
    }
}

/// Runs `ops` on every subject and on the model; the first disagreement is the error.
pub fn check_history(ops: &[Op], subjects: Vec<Subject>) -> Outcome {
    let mut runs: Vec<Run> = subjects
        .into_iter()
        .map(|subject| Run { subject, writers: (0..FILES.len()).map(|_| None).collect() })
        .collect();
    for run in &mut runs {
        let fs = Arc::clone(&run.subject.fs);
        for dir in DIRS {
            fs.create_dir_all(dir).map_err(|e| run.fail("create_dir_all", e))?;
            fs.sync_dir(dir).map_err(|e| run.fail("sync_dir", e))?;
        }
        fs.sync_dir("").map_err(|e| run.fail("sync_dir root", e))?;
    }
    let mut model = Model::default();
    for (i, op) in ops.iter().enumerate() {
        for run in &mut runs {
            apply(run, &model, op).map_err(|e| HistoryError { step: Step::Op { index: i, op: op.clone() }, ..e })?;
        }
        apply_model(&mut model, op, block_size(&runs));
        for run in &mut runs {
            run.compare(&model).map_err(|e| HistoryError { step: Step::After { index: i, op: op.clone() }, ..e })?;
        }
    }
    Ok(())
}

fn block_size(runs: &[Run]) -> usize {
    runs.first().map_or(4096, |r| r.subject.fs.block_size() as usize)
}

/// What an op resolves to given the model state before it; `None` when it does not apply.
enum Plan {
    Create(usize),
    Append(usize, Vec<u8>),
    Sync(usize),
    Close(usize),
    SyncDir(usize),
    Rename(usize, usize),
    Remove(usize),
    AppendCloned { src: usize, dst: usize, offset: usize, len: usize, pad: usize },
    CloneInto { src: usize, dst: usize, src_offset: usize, dst_offset: usize },
    Crash,
}

fn plan(model: &Model, op: &Op, bs: usize) -> Option<Plan> {
    let file = |x: u8| x as usize % FILES.len();
    let exists = |f: usize| model.entries.contains_key(&f);
    Some(match *op {
        Op::Create { file: f } => Plan::Create(file(f)),
        Op::Append { file: f, len, seed } => {
            let f = file(f);
            if !exists(f) {
                return None;
            }
            let salt = model.len(f) as u64;
            Plan::Append(f, pattern(u64::from(seed) << 32 | salt, len as usize % 8192))
        }
        Op::Sync { file: f } => Plan::Sync(file(f)).filter_exists(exists(file(f)))?,
        Op::Close { file: f } => Plan::Close(file(f)),
        Op::SyncDir { dir } => Plan::SyncDir(dir as usize % DIRS.len()),
        Op::Rename { from, to } => {
            let (from, to) = (file(from), file(to));
            if from == to || !exists(from) {
                return None;
            }
            Plan::Rename(from, to)
        }
        Op::Remove { file: f } => Plan::Remove(file(f)).filter_exists(exists(file(f)))?,
        Op::AppendCloned { src, dst, block, blocks } => {
            let (src, dst) = (file(src), file(dst));
            let blocks = 1 + blocks as usize % 3;
            let src_blocks = model.len(src) / bs;
            if src == dst || !exists(src) || !exists(dst) || src_blocks < blocks {
                return None;
            }
            let start = block as usize % (src_blocks - blocks + 1);
            let pad = (bs - model.len(dst) % bs) % bs;
            Plan::AppendCloned { src, dst, offset: start * bs, len: blocks * bs, pad }
        }
        Op::CloneInto { src, dst, src_block, dst_block } => {
            let (src, dst) = (file(src), file(dst));
            let src_blocks = model.len(src) / bs;
            if src == dst || !exists(src) || !exists(dst) || src_blocks == 0 {
                return None;
            }
            let src_offset = src_block as usize % src_blocks * bs;
            let dst_offset = dst_block as usize % (model.len(dst) / bs + 1) * bs;
            Plan::CloneInto { src, dst, src_offset, dst_offset }
        }
        Op::Crash => Plan::Crash,
    })
}

impl Plan {
    fn filter_exists(self, exists: bool) -> Option<Plan> {
        exists.then_some(self)
    }
}

fn apply(run: &mut Run, model: &Model, op: &Op) -> Outcome {
    let bs = run.subject.fs.block_size() as usize;
    let Some(plan) = plan(model, op, bs) else {
        return Ok(());
    };
    let fs = Arc::clone(&run.subject.fs);
    match plan {
        Plan::Create(f) => {
            run.close(f)?;
            run.writers[f] = Some(fs.create(FILES[f]).map_err(|e| run.fail("create", e))?);
        }
        Plan::Append(f, data) => run.writer(f)?.append(&data).map_err(|e| run.fail("append", e))?,
        Plan::Sync(f) => run.writer(f)?.sync().map_err(|e| run.fail("sync", e))?,
        Plan::Close(f) => run.close(f)?,
        Plan::SyncDir(d) => fs.sync_dir(DIRS[d]).map_err(|e| run.fail("sync_dir", e))?,
        Plan::Rename(from, to) => {
            run.close(from)?;
            run.close(to)?;
            fs.rename(FILES[from], FILES[to]).map_err(|e| run.fail("rename", e))?;
        }
        Plan::Remove(f) => {
            run.close(f)?;
            fs.remove(FILES[f]).map_err(|e| run.fail("remove", e))?;
        }
        Plan::AppendCloned { src, dst, offset, len, pad } => {
            run.flush_all()?;
            let w = run.writer(dst)?;
            let result =
                w.append(&vec![0xee; pad]).and_then(|()| w.append_cloned(FILES[src], offset as u64, len as u64));
            let outcome = result.map_err(|e| run.fail("append_cloned", e))?;
            if outcome.total() != len as u64 {
                return Err(run.fail("append_cloned", Problem::Differs(format!("outcome {outcome:?} for {len} bytes"))));
            }
        }
        Plan::CloneInto { src, dst, src_offset, dst_offset } => {
            run.close(dst)?;
            run.flush_all()?;
            let result = fs.clone_range(FILES[src], src_offset as u64, FILES[dst], dst_offset as u64, bs as u64);
            result.map_err(|e| run.fail("clone_range", e))?;
        }
        Plan::Crash => {
            (run.subject.crash)();
            // Handles die with the process; dropping them after the crash cannot make anything durable.
            run.writers.iter_mut().for_each(|w| *w = None);
        }
    }
    Ok(())
}

fn apply_model(model: &mut Model, op: &Op, bs: usize) {
    let Some(plan) = plan(model, op, bs) else {
        return;
    };
    match plan {
        Plan::Create(f) => {
            model.nodes.push(Node::default());
            model.entries.insert(f, model.nodes.len() - 1);
        }
        Plan::Append(f, data) => {
            model.node_mut(f).bytes.extend_from_slice(&data);
        }
        Plan::Sync(f) => {
            let node = model.node_mut(f);
            node.synced = node.bytes.clone();
        }
        Plan::Close(_) => {}
        Plan::SyncDir(d) => model.sync_dir(d),
        Plan::Rename(from, to) => {
            if let Some(n) = model.entries.remove(&from) {
                model.entries.insert(to, n);
            }
        }
        Plan::Remove(f) => {
            model.entries.remove(&f);
        }
        Plan::AppendCloned { src, dst, offset, len, pad } => {
            let data = model.node_mut(src).bytes[offset..offset + len].to_vec();
            let node = model.node_mut(dst);
            node.bytes.resize(node.bytes.len() + pad, 0xee);
            node.bytes.extend_from_slice(&data);
        }
        Plan::CloneInto { src, dst, src_offset, dst_offset } => {
            let data = model.node_mut(src).bytes[src_offset..src_offset + bs].to_vec();
            let node = model.node_mut(dst);
            let keep = node.bytes.len().max(dst_offset + bs);
            node.bytes.resize(keep, 0);
            node.bytes[dst_offset..dst_offset + bs].copy_from_slice(&data);
        }
        Plan::Crash => model.crash(),
    }
}
