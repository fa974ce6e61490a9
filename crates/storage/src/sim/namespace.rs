//! The namespace of a SimFs: directories with their current and durable entries (name -> inode),
//! with the same crash contract as MemFs: `sync_dir` makes a directory's entries durable, and a
//! rename that crosses directories becomes durable on both sides when either side is synced.

use std::collections::BTreeMap;

use super::journal::Record;

#[derive(Debug, Default, Clone)]
pub(super) struct Dir {
    pub entries: BTreeMap<String, u64>,
    pub durable: BTreeMap<String, u64>,
}

/// Makes `dir`'s entries durable (and both sides of renames across directories); returns the
/// journal records of every durable entry that changed.
pub(super) fn commit_dir(dirs: &mut BTreeMap<String, Dir>, dir: &str) -> Vec<Record> {
    let Some(d) = dirs.get(dir) else {
        return Vec::new();
    };
    let holds = |m: &BTreeMap<String, u64>, n: &str, ino: u64| m.get(n) == Some(&ino);
    let arrived: Vec<u64> = d.entries.iter().filter(|(n, &i)| !holds(&d.durable, n, i)).map(|(_, &i)| i).collect();
    let departed: Vec<u64> = d.durable.iter().filter(|(n, &i)| !holds(&d.entries, n, i)).map(|(_, &i)| i).collect();
    let before: Vec<(String, BTreeMap<String, u64>)> =
        dirs.iter().map(|(k, v)| (k.clone(), v.durable.clone())).collect();
    if !arrived.is_empty() || !departed.is_empty() {
        for (name, other) in dirs.iter_mut().filter(|(name, _)| name.as_str() != dir) {
            let _ = name;
            let entries = &other.entries;
            // The source side of a rename into `dir`.
            other.durable.retain(|n, ino| !arrived.contains(ino) || holds(entries, n, *ino));
            // The destination side of a rename out of `dir`.
            for (n, &ino) in &other.entries {
                if departed.contains(&ino) && !holds(&other.durable, n, ino) {
                    other.durable.insert(n.clone(), ino);
                }
            }
        }
    }
    if let Some(d) = dirs.get_mut(dir) {
        d.durable = d.entries.clone();
    }
    let mut records = Vec::new();
    for (name, old) in before {
        let Some(now) = dirs.get(&name).map(|d| &d.durable) else {
            continue;
        };
        for (n, &ino) in now {
            if old.get(n) != Some(&ino) {
                records.push(Record::Link { dir: name.clone(), name: n.clone(), ino });
            }
        }
        for n in old.keys() {
            if !now.contains_key(n) {
                records.push(Record::Unlink { dir: name.clone(), name: n.clone() });
            }
        }
    }
    records
}

/// Whether any directory refers to `ino`, currently or durably.
pub(super) fn referenced(dirs: &BTreeMap<String, Dir>, ino: u64) -> bool {
    dirs.values().any(|d| d.entries.values().any(|&i| i == ino) || d.durable.values().any(|&i| i == ino))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_across_directories_commits_both_sides() {
        let mut dirs = BTreeMap::new();
        let mut a = Dir::default();
        a.entries.insert("x".into(), 7);
        a.durable.insert("x".into(), 7);
        dirs.insert("a".to_string(), a);
        dirs.insert("b".to_string(), Dir::default());
        // Rename a/x -> b/y, then sync only b.
        dirs.get_mut("a").unwrap().entries.remove("x");
        dirs.get_mut("b").unwrap().entries.insert("y".into(), 7);
        let recs = commit_dir(&mut dirs, "b");
        assert!(dirs["a"].durable.is_empty(), "source side committed too");
        assert_eq!(dirs["b"].durable.get("y"), Some(&7));
        assert_eq!(recs.len(), 2, "{recs:?}");
        assert!(referenced(&dirs, 7) && !referenced(&dirs, 8));
    }
}
