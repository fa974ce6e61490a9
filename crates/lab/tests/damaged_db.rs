//! The lab's readers over a damaged database (readseq's cursor, YCSB E's scans, the content
//! digest) stop at the first damaged block, as the engine's iterator does: not one record past it.

use std::sync::Arc;

use lab::engine::{KvEngine, LsmEngine};
use lsm::{Db, Options, WriteOptions};
use storage::{Env, Fs, MemFs};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// 2,000 keys compacted down, then a newer SST that overwrites every one of them, whose first
/// data block is damaged. Returns the file system and the damaged SST.
fn damaged() -> (MemFs, String) {
    let mem = MemFs::new();
    let fs: Arc<dyn Fs> = Arc::new(mem.clone());
    let o = Options { create_if_missing: true, ..Options::default() };
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", o.clone()).unwrap();
    let w = WriteOptions::default();
    for round in 0..2 {
        for i in 0..2_000 {
            db.put(&w, &key(i), format!("value-{round}-{i}").as_bytes()).unwrap();
        }
        if round == 0 {
            db.compact_range(None, None).unwrap();
        } else {
            db.flush().unwrap();
        }
    }
    db.wait_for_background().unwrap();
    db.close().unwrap();
    let mut ssts: Vec<String> =
        fs.list("db").unwrap().into_iter().filter(|n| n.ends_with(".ldb")).map(|n| format!("db/{n}")).collect();
    ssts.sort();
    let newest = ssts.pop().unwrap();
    let size = fs.file_size(&newest).unwrap();
    let table = lsm::sst::Table::open(Arc::from(fs.open(&newest).unwrap()), size, 0, &o, None).unwrap();
    let first = table.data_block_handles()[0].offset as usize;
    let mut bytes = storage::read_all(&*fs, &newest).unwrap();
    bytes[first + 10] ^= 0x40;
    storage::write_all(&*fs, &newest, &bytes, true).unwrap();
    (mem, newest)
}

#[test]
fn readseq_scans_and_the_digest_stop_at_the_first_damaged_block() {
    let (mem, sst) = damaged();
    let mut engine = LsmEngine::open(Env::new(Arc::new(mem)), Options::default(), false).unwrap();
    // The damaged block holds the first keys: readseq reads nothing before the error (going on
    // would read the older versions of every key in it).
    let e = engine.next().expect_err("readseq must fail at the damaged block");
    assert!(e.to_string().contains(&sst), "{e}");
    let e = engine.scan(&key(0), 50).expect_err("a scan over the damaged block must fail");
    assert!(e.to_string().contains(&sst), "{e}");
    let e = engine.content_digest().expect_err("the digest must fail");
    assert!(e.to_string().contains(&sst), "{e}");
}
