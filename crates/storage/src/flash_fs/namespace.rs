//! The namespace of the flash file system (both placements): directories with their current and
//! durable entries (name -> inode), with the same crash contract as MemFs: `sync_dir` makes a
//! directory's entries durable, and a rename that crosses directories becomes durable on both
//! sides when either side is synced. Each file system journals the [`DirChange`]s a sync returns.
//!
//! Costs stay proportional to what changed: each directory remembers the names changed since its
//! last sync, and the namespace counts the references to every inode (current and durable), so a
//! sync and the question "is this inode still named anywhere" do not scan every entry (a database
//! directory holds thousands of files and is synced after every flush and compaction).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::error::{FsError, Result};
use crate::path;

/// A durable directory entry that a `sync_dir` changed: what a file system's journal records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DirChange {
    Link { dir: String, name: String, ino: u64 },
    Unlink { dir: String, name: String },
}

#[derive(Debug, Default, Clone)]
pub(crate) struct Dir {
    entries: BTreeMap<String, u64>,
    durable: BTreeMap<String, u64>,
    /// Names whose current entry may differ from the durable one.
    dirty: BTreeSet<String>,
}

impl Dir {
    pub fn entries(&self) -> &BTreeMap<String, u64> {
        &self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[derive(Debug, Default)]
pub(crate) struct Namespace {
    dirs: BTreeMap<String, Dir>,
    /// References to each inode from current and durable entries.
    refs: HashMap<u64, u32>,
}

impl Namespace {
    /// A namespace whose entries are all durable (a remount).
    pub fn from_durable(dirs: &BTreeMap<String, BTreeMap<String, u64>>) -> Namespace {
        let mut ns = Namespace::default();
        for (name, entries) in dirs {
            for &ino in entries.values() {
                *ns.refs.entry(ino).or_insert(0) += 2;
            }
            ns.dirs.insert(
                name.clone(),
                Dir { entries: entries.clone(), durable: entries.clone(), dirty: BTreeSet::new() },
            );
        }
        ns
    }

    /// Whether `p` names a file (an entry of its parent directory).
    pub fn is_file(&self, p: &str) -> bool {
        self.dir(path::parent(p)).is_some_and(|d| d.entries().contains_key(path::file_name(p)))
    }

    /// The names of the entries of directory `dir`, files and subdirectories, sorted (`Fs::list`).
    pub fn list(&self, dir: &str) -> Result<Vec<String>> {
        let d = self.dir(dir).ok_or_else(|| FsError::NotFound { op: "list", path: dir.to_string() })?;
        let mut names: Vec<String> = d.entries().keys().cloned().collect();
        for sub in self.dir_names() {
            if !sub.is_empty() && path::parent(sub) == dir {
                names.push(path::file_name(sub).to_string());
            }
        }
        names.sort();
        Ok(names)
    }

    /// Creates `dir` and its missing parents (`Fs::create_dir_all`); returns the directories it
    /// created, parents first, for the file system to journal. A prefix that is a file is an error.
    pub fn create_dir_all(&mut self, dir: &str) -> Result<Vec<String>> {
        let mut end = 0;
        let mut created = Vec::new();
        while end < dir.len() {
            end = dir[end..].find('/').map_or(dir.len(), |i| end + i);
            let prefix = &dir[..end];
            if self.is_file(prefix) {
                return Err(FsError::AlreadyExists { op: "create_dir_all", path: prefix.to_string() });
            }
            if self.add_dir(prefix) {
                created.push(prefix.to_string());
            }
            end += 1;
        }
        Ok(created)
    }

    /// Checks that `dir` exists and is empty: no entries and no subdirectories (`Fs::remove_dir`).
    pub fn check_removable(&self, dir: &str) -> Result<()> {
        let d = self.dir(dir).ok_or_else(|| FsError::NotFound { op: "remove_dir", path: dir.to_string() })?;
        let has_subdirs = self.dir_names().any(|d| !d.is_empty() && path::parent(d) == dir);
        if !d.is_empty() || has_subdirs {
            return Err(FsError::DirNotEmpty { op: "remove_dir", path: dir.to_string() });
        }
        Ok(())
    }

    pub fn dir(&self, name: &str) -> Option<&Dir> {
        self.dirs.get(name)
    }

    pub fn contains_dir(&self, name: &str) -> bool {
        self.dirs.contains_key(name)
    }

    pub fn dir_names(&self) -> impl Iterator<Item = &String> {
        self.dirs.keys()
    }

    /// Creates an empty directory (durable at once, as in MemFs); false if it exists.
    pub fn add_dir(&mut self, name: &str) -> bool {
        if self.dirs.contains_key(name) {
            return false;
        }
        self.dirs.insert(name.to_string(), Dir::default());
        true
    }

    /// Removes a directory with its durable entries (durable at once); returns the inodes those
    /// entries named.
    pub fn remove_dir(&mut self, name: &str) -> Vec<u64> {
        let Some(d) = self.dirs.remove(name) else { return Vec::new() };
        let inos: Vec<u64> = d.entries.values().chain(d.durable.values()).copied().collect();
        for &ino in &inos {
            self.unref(ino);
        }
        inos
    }

    /// Sets `dir/name` to `ino` in the current state; returns the inode it named before.
    pub fn insert(&mut self, dir: &str, name: &str, ino: u64) -> Option<u64> {
        let d = self.dirs.get_mut(dir)?;
        let old = d.entries.insert(name.to_string(), ino);
        d.dirty.insert(name.to_string());
        *self.refs.entry(ino).or_insert(0) += 1;
        if let Some(o) = old {
            self.unref(o);
        }
        old
    }

    /// Removes `dir/name` from the current state; returns the inode it named.
    pub fn remove(&mut self, dir: &str, name: &str) -> Option<u64> {
        let d = self.dirs.get_mut(dir)?;
        let old = d.entries.remove(name);
        d.dirty.insert(name.to_string());
        if let Some(o) = old {
            self.unref(o);
        }
        old
    }

    /// Whether any directory names `ino`, currently or durably.
    pub fn referenced(&self, ino: u64) -> bool {
        self.refs.get(&ino).is_some_and(|&n| n > 0)
    }

    fn unref(&mut self, ino: u64) {
        if let Some(n) = self.refs.get_mut(&ino) {
            *n -= 1;
            if *n == 0 {
                self.refs.remove(&ino);
            }
        }
    }

    /// Makes `dir`'s entries durable (and both sides of renames across directories); returns every
    /// durable entry that changed, and the inodes some durable entry no longer names (candidates
    /// for collection).
    pub fn commit_dir(&mut self, dir: &str) -> (Vec<DirChange>, Vec<u64>) {
        let Some(d) = self.dirs.get_mut(dir) else { return (Vec::new(), Vec::new()) };
        let dirty = std::mem::take(&mut d.dirty);
        let mut arrived = Vec::new();
        let mut departed = Vec::new();
        for name in &dirty {
            let (cur, dur) = (d.entries.get(name).copied(), d.durable.get(name).copied());
            if cur != dur {
                arrived.extend(cur);
                departed.extend(dur);
            }
        }
        let mut changes: Vec<(String, String, Option<u64>)> =
            dirty.iter().map(|n| (dir.to_string(), n.clone(), d.entries.get(n).copied())).collect();
        if !arrived.is_empty() || !departed.is_empty() {
            for (name, other) in self.dirs.iter().filter(|(name, _)| name.as_str() != dir) {
                // The source side of a rename into `dir`: its old durable name goes (whatever the
                // name holds now stays undurable until that directory is synced).
                for (n, ino) in &other.durable {
                    if arrived.contains(ino) && other.entries.get(n) != Some(ino) {
                        changes.push((name.clone(), n.clone(), None));
                    }
                }
                // The destination side of a rename out of `dir`.
                for (n, ino) in &other.entries {
                    if departed.contains(ino) && other.durable.get(n) != Some(ino) {
                        changes.push((name.clone(), n.clone(), Some(*ino)));
                    }
                }
            }
        }
        let mut records = Vec::new();
        let mut dropped = Vec::new();
        for (dname, n, new) in changes {
            let Some(d) = self.dirs.get_mut(&dname) else { continue };
            let old = match new {
                Some(ino) => d.durable.insert(n.clone(), ino),
                None => d.durable.remove(&n),
            };
            if old == new {
                continue;
            }
            match new {
                Some(ino) => {
                    records.push(DirChange::Link { dir: dname.clone(), name: n, ino });
                    *self.refs.entry(ino).or_insert(0) += 1;
                }
                None => records.push(DirChange::Unlink { dir: dname.clone(), name: n }),
            }
            if let Some(o) = old {
                self.unref(o);
                dropped.push(o);
            }
        }
        (records, dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_across_directories_commits_both_sides() {
        let mut durable = BTreeMap::new();
        durable.insert("a".to_string(), BTreeMap::from([("x".to_string(), 7)]));
        durable.insert("b".to_string(), BTreeMap::new());
        let mut ns = Namespace::from_durable(&durable);
        // Rename a/x -> b/y, then sync only b.
        ns.remove("a", "x");
        ns.insert("b", "y", 7);
        let (recs, dropped) = ns.commit_dir("b");
        assert!(ns.dir("a").unwrap().durable.is_empty(), "source side committed too");
        assert_eq!(ns.dir("b").unwrap().durable.get("y"), Some(&7));
        assert_eq!(recs.len(), 2, "{recs:?}");
        assert_eq!(dropped, vec![7], "a/x no longer names inode 7 (it is still named by b/y)");
        assert!(ns.referenced(7) && !ns.referenced(8));
        // Removing the file and syncing drops the last reference.
        ns.remove("b", "y");
        assert!(ns.referenced(7), "the durable entry still names it");
        let (_, dropped) = ns.commit_dir("b");
        assert_eq!(dropped, vec![7]);
        assert!(!ns.referenced(7));
    }

    #[test]
    fn the_source_side_of_a_rename_is_removed_not_replaced() {
        // a/1 -> b/0, then a/0 -> a/1, then only b is synced (a proptest history that once failed).
        let mut durable = BTreeMap::new();
        durable.insert("a".to_string(), BTreeMap::from([("0".to_string(), 1), ("1".to_string(), 2)]));
        durable.insert("b".to_string(), BTreeMap::new());
        let mut ns = Namespace::from_durable(&durable);
        ns.remove("a", "1");
        ns.insert("b", "0", 2);
        ns.remove("a", "0");
        ns.insert("a", "1", 1);
        ns.commit_dir("b");
        let a = &ns.dir("a").unwrap().durable;
        assert_eq!(a.get("0"), Some(&1), "a was not synced: a/0 stays durable");
        assert_eq!(a.get("1"), None, "the renamed file's old name goes; the new a/1 is not durable yet");
        assert_eq!(ns.dir("b").unwrap().durable.get("0"), Some(&2));
    }
}
