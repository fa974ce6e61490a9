//! What a lookup costs in the LSM-in-device baseline: every SST it consults is read whole (no
//! block index or cache), L0 newest first, then one SST per level, stopping at the first version
//! found; with `filters` (the default) an SST is consulted only when its bloom filter says the key
//! may be in it; and where an SST's pages go (one plane, or striped, the default).

mod common;

use common::small_lsm_config;
use flashsim::{Cause, Nanos};
use kvssd::{KvDevice, LsmConfig, LsmInDevice, SstInfo};

/// A device whose L1 holds one SST C with `a`, `b`, `m`, `y`, `z` (5 records of 707 bytes: 4
/// pages) and whose L0 holds one newer SST D with `a` and `z` only (2 records: 2 pages): D's
/// range covers `m` without holding it. L0 is compacted at 2 SSTs; L1 may hold 1 MiB, so nothing
/// moves further.
fn l0_over_l1(cfg: LsmConfig) -> (LsmInDevice, Nanos) {
    let cfg = LsmConfig { l0_compaction_trigger: 2, l1_max_bytes: 1 << 20, ..cfg };
    let mut dev = LsmInDevice::new(cfg).unwrap();
    let v = |c: u8| vec![c; 700];
    // SST A (a, m, z) and SST B (b, y) fill L0 to its trigger of 2: they overlap, so both are
    // merged into one L1 SST.
    for k in [b"a", b"m", b"z"] {
        dev.store(0, k, &v(1)).unwrap();
    }
    let t = dev.flush(0).unwrap();
    for k in [b"b", b"y"] {
        dev.store(t, k, &v(2)).unwrap();
    }
    let t = dev.flush(t).unwrap();
    for k in [b"a", b"z"] {
        dev.store(t, k, &v(3)).unwrap();
    }
    let t = dev.flush(t).unwrap();
    let (l0, l1) = (dev.level_ssts(0), dev.level_ssts(1));
    assert_eq!((l0.len(), l1.len()), (1, 1), "L0 {l0:?} L1 {l1:?}");
    assert_eq!((l0[0].ppns.len(), l1[0].ppns.len()), (2, 4));
    assert_eq!((&l0[0].smallest[..], &l0[0].largest[..]), (&b"a"[..], &b"z"[..]));
    assert_eq!(dev.stats().compactions[1], 1);
    (dev, t)
}

/// Host page reads, SSTs read and value of a get issued when the device is idle.
fn get_when_idle(dev: &mut LsmInDevice, key: &[u8]) -> (u64, u64, Option<Vec<u8>>) {
    let at = dev.media().idle_at() + 1;
    let (reads, ssts) = (dev.counters().cause(Cause::HOST).reads, dev.stats().lookup_ssts_read);
    let got = dev.retrieve(at, key).unwrap();
    (dev.counters().cause(Cause::HOST).reads - reads, dev.stats().lookup_ssts_read - ssts, got.value)
}

fn planes(dev: &LsmInDevice, sst: &SstInfo) -> Vec<u32> {
    let g = dev.media().geometry();
    sst.ppns.iter().map(|&ppn| g.plane_of_block(g.block_of(ppn))).collect()
}

/// The reading before issue 28: no filters, an SST's pages in one plane.
fn unfiltered() -> LsmConfig {
    LsmConfig { filters: false, stripe: false, ..small_lsm_config() }
}

#[test]
fn a_get_reads_every_page_of_every_sst_it_consults() {
    let (mut dev, _) = l0_over_l1(unfiltered());
    dev.check().unwrap();
    // m: D covers it but lacks it (2 pages), C has it (4 pages): both read whole.
    assert_eq!(get_when_idle(&mut dev, b"m"), (2 + 4, 2, Some(vec![1; 700])));
    // b: the same two SSTs; the value of the older flush, merged into C.
    assert_eq!(get_when_idle(&mut dev, b"b"), (2 + 4, 2, Some(vec![2; 700])));
    // a: D has the newest version; C is not consulted.
    assert_eq!(get_when_idle(&mut dev, b"a"), (2, 1, Some(vec![3; 700])));
    // c: in both ranges, in neither SST.
    assert_eq!(get_when_idle(&mut dev, b"c"), (2 + 4, 2, None));
    // Outside every range: nothing read.
    assert_eq!(get_when_idle(&mut dev, b"zz"), (0, 0, None));
    assert!(dev.exist(dev.media().idle_at(), b"m").unwrap().value);
    assert_eq!(dev.counters().cause(Cause::HOST).reads, 6 + 6 + 2 + 6 + 6, "the exist read whole SSTs too");
}

#[test]
fn l0_ssts_are_consulted_newest_first() {
    let mut dev = LsmInDevice::new(LsmConfig { l0_compaction_trigger: 4, ..unfiltered() }).unwrap();
    let mut t = 0;
    for (i, len) in [(1u8, 1500), (2, 2500), (3, 500)] {
        dev.store(t, b"k", &vec![i; len]).unwrap();
        dev.store(t, &[b'k', i], b"x").unwrap();
        t = dev.flush(t).unwrap();
    }
    let l0 = dev.level_ssts(0);
    assert_eq!(l0.iter().map(|s| s.ppns.len()).collect::<Vec<_>>(), vec![2, 3, 1], "oldest first");
    // The newest SST (1 page) answers; the older ones are not read.
    assert_eq!(get_when_idle(&mut dev, b"k"), (1, 1, Some(vec![3; 500])));
    // k\x01 is in the oldest: every L0 SST covering it is read, newest first.
    assert_eq!(get_when_idle(&mut dev, b"k\x01"), (1 + 3 + 2, 3, Some(b"x".to_vec())));
}

#[test]
fn a_delete_writes_a_tombstone_that_shadows_the_older_version() {
    let (mut dev, t) = l0_over_l1(small_lsm_config());
    let del = dev.delete(t, b"m").unwrap();
    assert!(del.done > t, "the delete looked m up on flash first");
    assert_eq!(common::delete(&mut dev, del.done, b"m"), (del.done, false), "the tombstone in the memtable answers");
    let t = dev.flush(del.done).unwrap();
    // L0 now has D and the tombstone's SST: its trigger of 2 merges them and C into L1, and the
    // tombstone goes (no deeper level holds m).
    assert_eq!((dev.level_ssts(0).len(), dev.level_ssts(1).len()), (0, 1));
    assert_eq!(dev.retrieve(t, b"m").unwrap().value, None);
    assert_eq!(dev.retrieve(t, b"y").unwrap().value, Some(vec![2; 700]));
    assert_eq!(dev.level_bytes(1), 4 * 707, "a, b, y, z: m and its tombstone are gone");
    dev.check().unwrap();
}

#[test]
fn an_sst_goes_to_one_plane_unless_striped() {
    assert!(small_lsm_config().stripe && small_lsm_config().filters, "striped, with filters, by default");
    let (dev, _) = l0_over_l1(unfiltered());
    for sst in dev.level_ssts(0).iter().chain(&dev.level_ssts(1)) {
        let p = planes(&dev, sst);
        assert!(p.iter().all(|&x| x == p[0]), "SST {} on planes {p:?}", sst.id);
        assert!(sst.ppns.windows(2).all(|w| w[1] == w[0] + 1), "pages in order in one block: {:?}", sst.ppns);
    }
    let (dev, _) = l0_over_l1(LsmConfig { stripe: true, ..small_lsm_config() });
    let c = &dev.level_ssts(1)[0];
    let mut p = planes(&dev, c);
    p.sort_unstable();
    assert_eq!(p, vec![0, 1, 2, 3], "C's 4 pages on the 4 planes");
}

#[test]
fn with_filters_a_get_reads_only_the_ssts_whose_filter_says_maybe() {
    let (mut dev, _) = l0_over_l1(small_lsm_config());
    dev.check().unwrap();
    // m: D covers it but its filter (a, z) rules it out; C has it (4 pages).
    assert_eq!(get_when_idle(&mut dev, b"m"), (4, 1, Some(vec![1; 700])));
    assert_eq!(get_when_idle(&mut dev, b"b"), (4, 1, Some(vec![2; 700])));
    assert_eq!(get_when_idle(&mut dev, b"a"), (2, 1, Some(vec![3; 700])));
    // c: in both ranges, in neither filter (the tiny filters of 64 bits happen to say no).
    assert_eq!(get_when_idle(&mut dev, b"c"), (0, 0, None));
    assert_eq!(dev.stats().lookup_filter_skips, 2 + 2);
    assert_eq!((dev.stats().gets, dev.stats().get_ssts_read), (4, 3));
    assert_eq!(dev.work().ssts_read_per_get, Some(0.75));
}

/// A multi-level device of many keys: a get of a key in the deepest levels reads about one SST
/// with filters, several without (L0 and the levels above it cover most keys).
#[test]
fn filters_cut_the_ssts_a_get_reads_on_a_multi_level_lsm() {
    let run = |filters: bool| {
        let cfg = LsmConfig { filters, l0_compaction_trigger: 4, ..small_lsm_config() };
        let mut dev = LsmInDevice::new(cfg).unwrap();
        let key = |i: u32| format!("k{:05}", (i * 7919) % 4000).into_bytes();
        let mut t = 0;
        for i in 0..4000 {
            t = dev.store(t, &key(i), &[i as u8; 40]).unwrap().done;
        }
        t = dev.flush(t).unwrap();
        dev.check().unwrap();
        let levels = (0..dev.config().levels).filter(|&l| !dev.level_ssts(l).is_empty()).count();
        assert!(levels >= 3, "{levels} levels hold SSTs");
        let before = dev.stats().get_ssts_read;
        for i in (0..4000).step_by(13) {
            let got = dev.retrieve(t, &key(i)).unwrap();
            assert_eq!(got.value, Some(vec![i as u8; 40]), "key {i}");
            t = got.done;
        }
        let gets = (0..4000).step_by(13).count() as f64;
        ((dev.stats().get_ssts_read - before) as f64 / gets, dev.work().ssts_read_per_get.unwrap())
    };
    let ((with, with_stat), (without, _)) = (run(true), run(false));
    assert_eq!(with, with_stat);
    assert!(without > 1.5, "without filters a get reads {without} SSTs");
    assert!((1.0..1.2).contains(&with), "with filters a get reads {with} SSTs (the one holding the key, ~1 % more)");
}
