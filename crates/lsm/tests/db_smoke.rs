use std::sync::Arc;

use lsm::{Db, Options, ReadOptions, WriteOptions};
use storage::{Env, Fs, MemFs};

#[test]
fn put_get_delete_reopen_threaded() {
    let mem = MemFs::new();
    let fs: Arc<dyn Fs> = Arc::new(mem.clone());
    let mut o =
        Options { create_if_missing: true, write_buffer_size: 64 << 10, max_file_size: 64 << 10, ..Options::default() };
    o.max_bytes_for_level_base = 256 << 10;
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", o.clone()).unwrap();
    let w = WriteOptions::default();
    for i in 0..20_000u32 {
        db.put(&w, format!("key{:08}", i % 5000).as_bytes(), format!("value{i:08}-{}", "x".repeat(50)).as_bytes())
            .unwrap();
    }
    db.delete(&w, b"key00000007").unwrap();
    db.wait_for_background().unwrap();
    let r = ReadOptions::default();
    assert_eq!(db.get(&r, b"key00000008").unwrap().unwrap()[..13].to_vec(), b"value00015008".to_vec());
    assert_eq!(db.get(&r, b"key00000007").unwrap(), None);
    println!("{}", db.property("leveldb.stats").unwrap());
    let n = db.scan(&r, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded).unwrap().count();
    assert_eq!(n, 4999);
    db.close().unwrap();
    let db = Db::open(Env::new(fs), "db", o).unwrap();
    assert_eq!(db.get(&r, b"key00000008").unwrap().unwrap()[..13].to_vec(), b"value00015008".to_vec());
    assert_eq!(db.get(&r, b"key00000007").unwrap(), None);
    let n = db.scan(&r, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded).unwrap().count();
    assert_eq!(n, 4999);
}
