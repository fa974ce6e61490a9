//! The namespace of a [`super::MemFs`]: directories with current and durable entries, and file nodes with their
//! current bytes and synced length. `commit_dir` is `sync_dir`, including the atomic cross-directory rename.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{FsError, Result};
use crate::lock_unpoisoned as lock;
use crate::path;

pub(super) struct Namespace {
    pub(super) dirs: BTreeMap<String, Dir>,
    pub(super) locks: BTreeMap<String, u64>,
    pub(super) next_lock_id: u64,
}

#[derive(Default)]
pub(super) struct Dir {
    /// Changed only through `put` and `take`, which keep `changed`.
    pub(super) entries: BTreeMap<String, Arc<Node>>,
    pub(super) durable: BTreeMap<String, Arc<Node>>,
    /// Every name whose entry may differ from its durable one: what `commit_dir` looks at, so a
    /// `sync_dir` costs what changed since the last one, not the size of the directory.
    pub(super) changed: BTreeSet<String>,
}

impl Dir {
    pub(super) fn put(&mut self, name: &str, node: Arc<Node>) {
        self.changed.insert(name.to_string());
        self.entries.insert(name.to_string(), node);
    }

    pub(super) fn take(&mut self, name: &str) -> Option<Arc<Node>> {
        self.changed.insert(name.to_string());
        self.entries.remove(name)
    }
}

pub(super) struct Node {
    pub(super) data: Mutex<NodeData>,
    pub(super) used: Arc<AtomicU64>,
}

#[derive(Default)]
pub(super) struct NodeData {
    pub(super) bytes: Vec<u8>,
    pub(super) synced_len: usize,
    /// The durable content, kept only while bytes below `synced_len` have been overwritten since the last sync.
    pub(super) durable_override: Option<Vec<u8>>,
}

impl Drop for Node {
    fn drop(&mut self) {
        let len = lock(&self.data).bytes.len() as u64;
        self.used.fetch_sub(len, Ordering::Relaxed);
    }
}

impl NodeData {
    /// Writes `src` at `offset` (at most the current length), keeping the durable content intact.
    pub(super) fn write_at(&mut self, offset: usize, src: &[u8]) {
        if offset < self.synced_len && self.durable_override.is_none() {
            self.durable_override = Some(self.bytes[..self.synced_len].to_vec());
        }
        let overlap = (self.bytes.len() - offset).min(src.len());
        self.bytes[offset..offset + overlap].copy_from_slice(&src[..overlap]);
        self.bytes.extend_from_slice(&src[overlap..]);
    }
}

impl Namespace {
    pub(super) fn dir(&self, op: &'static str, dir: &str) -> Result<&Dir> {
        match self.dirs.get(dir) {
            Some(d) => Ok(d),
            None => Err(self.missing_dir(op, dir)),
        }
    }

    pub(super) fn dir_mut(&mut self, op: &'static str, dir: &str) -> Result<&mut Dir> {
        if !self.dirs.contains_key(dir) {
            return Err(self.missing_dir(op, dir));
        }
        self.dirs.get_mut(dir).ok_or_else(|| FsError::NotFound { op, path: dir.to_string() })
    }

    pub(super) fn missing_dir(&self, op: &'static str, dir: &str) -> FsError {
        if self.is_file(dir) {
            FsError::WrongKind { op, path: dir.to_string(), expected: "directory" }
        } else {
            FsError::NotFound { op, path: dir.to_string() }
        }
    }

    pub(super) fn is_file(&self, p: &str) -> bool {
        self.dirs.get(path::parent(p)).is_some_and(|d| d.entries.contains_key(path::file_name(p)))
    }

    pub(super) fn file(&self, op: &'static str, p: &str) -> Result<Arc<Node>> {
        path::validate(p)?;
        if self.dirs.contains_key(p) {
            return Err(FsError::WrongKind { op, path: p.to_string(), expected: "file" });
        }
        self.dirs
            .get(path::parent(p))
            .and_then(|d| d.entries.get(path::file_name(p)))
            .cloned()
            .ok_or_else(|| FsError::NotFound { op, path: p.to_string() })
    }

    /// The directory that will hold new file `p`, after checking that `p` is not a directory.
    pub(super) fn parent_for_new(&mut self, op: &'static str, p: &str) -> Result<&mut Dir> {
        path::validate(p)?;
        if self.dirs.contains_key(p) {
            return Err(FsError::WrongKind { op, path: p.to_string(), expected: "file" });
        }
        let parent = path::parent(p);
        if !self.dirs.contains_key(parent) {
            return Err(FsError::NotFound { op, path: p.to_string() });
        }
        self.dir_mut(op, parent)
    }
}

/// Whether `map` has exactly `node` under `name`.
fn holds(map: &BTreeMap<String, Arc<Node>>, name: &str, node: &Arc<Node>) -> bool {
    map.get(name).is_some_and(|n| Arc::ptr_eq(n, node))
}

impl Namespace {
    /// `sync_dir`: makes `dir`'s entries durable, with both sides of any rename that crosses directories.
    pub(super) fn commit_dir(&mut self, dir: &str) {
        let Some(d) = self.dirs.get_mut(dir) else { return };
        let changed = std::mem::take(&mut d.changed);
        let differs = |from: &BTreeMap<String, Arc<Node>>, to: &BTreeMap<String, Arc<Node>>| -> Vec<Arc<Node>> {
            changed.iter().filter_map(|n| from.get(n).filter(|node| !holds(to, n, node)).cloned()).collect()
        };
        let arrived = differs(&d.entries, &d.durable);
        let departed = differs(&d.durable, &d.entries);
        let contains = |list: &[Arc<Node>], node: &Arc<Node>| list.iter().any(|n| Arc::ptr_eq(n, node));
        if !arrived.is_empty() || !departed.is_empty() {
            for (_, other) in self.dirs.iter_mut().filter(|(name, _)| name.as_str() != dir) {
                // The source side of a rename into `dir`.
                let entries = &other.entries;
                other.durable.retain(|n, node| !contains(&arrived, node) || holds(entries, n, node));
                // The destination side of a rename out of `dir`.
                for (n, node) in &other.entries {
                    if contains(&departed, node) && !holds(&other.durable, n, node) {
                        other.durable.insert(n.clone(), Arc::clone(node));
                    }
                }
            }
        }
        if let Some(d) = self.dirs.get_mut(dir) {
            for n in changed {
                match d.entries.get(&n) {
                    Some(node) => {
                        d.durable.insert(n, Arc::clone(node));
                    }
                    None => {
                        d.durable.remove(&n);
                    }
                }
            }
        }
    }
}
