//! FaultFs: schedules, probabilities, torn writes, the off switch, determinism, and crash-and-reopen over MemFs.

use std::sync::Arc;

use storage::{read_all, write_all, FaultFs, Fs, FsError, IoClass, MemFs};

fn over_mem(seed: u64) -> (MemFs, FaultFs) {
    let mem = MemFs::new();
    let fault = FaultFs::new(Arc::new(mem.clone()), seed);
    (mem, fault)
}

#[test]
fn nth_operation_of_a_class_fails_and_names_itself() {
    let (_mem, fs) = over_mem(1);
    let mut w = fs.create("wal").unwrap();
    fs.fail_nth(IoClass::Sync, 2);
    w.append(b"a").unwrap();
    w.sync().expect("first sync passes");
    match w.sync() {
        Err(FsError::Injected { class: IoClass::Sync, op: "sync", path }) => assert_eq!(path, "wal"),
        other => panic!("expected an injected sync fault, got {other:?}"),
    }
    w.sync().expect("only the scheduled one fails");
    fs.fail_nth(IoClass::Metadata, 1);
    assert!(matches!(fs.rename("wal", "x"), Err(FsError::Injected { class: IoClass::Metadata, op: "rename", .. })));
    assert!(fs.exists("wal").unwrap(), "a failed operation does not reach the inner file system");
    fs.fail_nth(IoClass::Read, 1);
    let r = fs.open("wal").unwrap();
    let mut buf = [0u8; 1];
    assert!(matches!(r.read_at(0, &mut buf), Err(FsError::Injected { class: IoClass::Read, .. })));
    assert_eq!(r.read_at(0, &mut buf).unwrap(), 1);
    let s = fs.stats();
    assert_eq!((s.injected(IoClass::Sync), s.injected(IoClass::Metadata), s.injected(IoClass::Read)), (1, 1, 1));
}

fn injection_pattern(seed: u64) -> Vec<bool> {
    let (_mem, fs) = over_mem(seed);
    fs.set_probability(IoClass::Write, 0.3);
    let mut w = fs.create("f").unwrap();
    (0..200).map(|_| w.append(b"xyz").is_err()).collect()
}

#[test]
fn probabilities_are_deterministic_from_the_seed() {
    let a = injection_pattern(7);
    assert_eq!(a, injection_pattern(7), "same seed, same faults");
    assert_ne!(a, injection_pattern(8), "another seed, other faults");
    let failures = a.iter().filter(|&&f| f).count();
    assert!((30..=90).contains(&failures), "about 30 % of 200: {failures}");
}

#[test]
fn switching_off_stops_injection() {
    let (_mem, fs) = over_mem(3);
    fs.set_probability(IoClass::Metadata, 1.0);
    assert!(fs.exists("x").is_err());
    fs.set_enabled(false);
    assert!(!fs.enabled());
    assert!(!fs.exists("x").unwrap());
    fs.set_enabled(true);
    fs.clear();
    assert!(!fs.exists("x").unwrap());
    assert_eq!(fs.stats().ops(IoClass::Metadata), 3);
}

#[test]
fn torn_write_persists_a_prefix_that_survives_a_crash() {
    let (mem, fs) = over_mem(11);
    let mut w = fs.create("wal").unwrap();
    w.append(b"header").unwrap();
    w.sync().unwrap();
    fs.sync_dir("").unwrap();
    fs.set_torn_writes(1.0);
    fs.fail_nth(IoClass::Write, 1);
    let record = [0xabu8; 1000];
    assert!(matches!(w.append(&record), Err(FsError::Injected { class: IoClass::Write, .. })));
    assert_eq!(fs.stats().torn_writes, 1);
    mem.crash();
    let data = read_all(&mem, "wal").unwrap();
    assert!(data.starts_with(b"header"));
    let torn = data.len() - 6;
    assert!(torn < record.len(), "a strict prefix of the record persisted: {torn} bytes");
    assert!(data[6..].iter().all(|&b| b == 0xab));
}

#[test]
fn crash_and_reopen_through_the_wrapper() {
    let (mem, fs) = over_mem(5);
    write_all(&fs, "CURRENT", b"MANIFEST-000001\n", true).unwrap();
    fs.sync_dir("").unwrap();
    fs.set_probability(IoClass::Write, 1.0);
    assert!(write_all(&fs, "000002.log", b"lost", true).is_err());
    mem.crash();
    fs.set_enabled(false);
    assert_eq!(read_all(&fs, "CURRENT").unwrap(), b"MANIFEST-000001\n");
    assert_eq!(fs.list("").unwrap(), vec!["CURRENT".to_string()]);
}

#[test]
fn clone_faults_are_write_faults() {
    let (_mem, fs) = over_mem(9);
    write_all(&fs, "s", &[1u8; 4096], true).unwrap();
    write_all(&fs, "d", &[], true).unwrap();
    fs.fail_nth(IoClass::Write, 1);
    assert!(matches!(fs.clone_range("s", 0, "d", 0, 4096), Err(FsError::Injected { op: "clone_range", .. })));
    fs.clone_range("s", 0, "d", 0, 4096).unwrap();
    let mut w = fs.open_append("d").unwrap();
    fs.fail_nth(IoClass::Write, 1);
    assert!(matches!(w.append_cloned("s", 0, 4096), Err(FsError::Injected { op: "append_cloned", .. })));
    assert_eq!(w.append_cloned("s", 0, 4096).unwrap().cloned_bytes, 4096);
    fs.set_torn_writes(1.0);
    fs.fail_nth(IoClass::Write, 1);
    assert!(w.flush().is_err());
    assert_eq!(fs.stats().torn_writes, 0, "only appends tear");
}
