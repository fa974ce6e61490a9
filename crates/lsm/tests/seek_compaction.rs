//! LevelDB's seek-triggered compaction and `Options::seek_compaction`: a table that lookups keep
//! reading in vain (the key lies in a deeper table) is compacted after its allowance of seeks, and
//! never when the option is off.

use std::sync::Arc;

use lsm::{Db, Options, ReadOptions, WriteOptions};
use storage::{Env, Fs, MemFs};

/// Files per level before and after `gets` lookups of a key that a shallower table's range covers
/// but only a deeper table holds.
fn files_after_lookups(seek_compaction: bool, gets: usize) -> (Vec<usize>, Vec<usize>) {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    let options = Options { create_if_missing: true, seek_compaction, ..Options::default() };
    let db = Db::open(Env::new(fs), "db", options).unwrap();
    let w = WriteOptions::default();
    db.put(&w, b"m", b"deep").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    // A shallower table whose range [a, z] covers "m" without holding it.
    db.put(&w, b"a", b"1").unwrap();
    db.put(&w, b"z", b"2").unwrap();
    db.flush().unwrap();
    db.wait_for_background().unwrap();
    let before = db.files_per_level();
    for _ in 0..gets {
        assert_eq!(db.get(&ReadOptions::default(), b"m").unwrap().as_deref(), Some(&b"deep"[..]));
    }
    db.wait_for_background().unwrap();
    (before, db.files_per_level())
}

/// The level of the shallowest table.
fn top(files: &[usize]) -> usize {
    files.iter().position(|&n| n > 0).expect("a table")
}

#[test]
fn lookups_that_look_further_compact_the_table_they_read_in_vain() {
    let (before, after) = files_after_lookups(true, 150);
    assert_eq!(before.iter().filter(|&&n| n > 0).count(), 2, "setup: two tables on two levels: {before:?}");
    // Fewer lookups than the allowance (100 seeks) compact nothing.
    assert_eq!(files_after_lookups(true, 50).1, before);
    assert!(top(&after) > top(&before), "the table that absorbed 100 seeks went down: {before:?} -> {after:?}");
}

#[test]
fn without_seek_compaction_lookups_compact_nothing() {
    let (before, after) = files_after_lookups(false, 150);
    assert_eq!(before.iter().filter(|&&n| n > 0).count(), 2, "{before:?}");
    assert_eq!(after, before);
}
