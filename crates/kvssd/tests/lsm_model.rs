//! The LSM-in-device baseline against a `HashMap` model: random puts, overwrites, deletes, gets and
//! exist calls on a small device where flushes, compactions into several levels and GC run; every
//! get returns the last value written (decoded from the flash pages), and the device's structures
//! agree with each other and with the media after every case.

mod common;

use std::collections::HashMap;

use common::{key, small_lsm_config, value, Lcg};
use flashsim::{Cause, HostLabel, Nanos};
use kvssd::{KvDevice, LsmInDevice};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Put { key: usize, len: usize },
    Get(usize),
    Delete(usize),
    Exist(usize),
    Flush,
}

/// Keys `0..HOT` are written often, the others rarely: the rare ones sink to the deep levels, and
/// deletes of them leave tombstones that must shadow them until a compaction meets them.
const KEYS: usize = 48;
const HOT: usize = 8;

fn key_index() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 0..HOT, 1 => HOT..KEYS]
}

fn value_len() -> impl Strategy<Value = usize> {
    // Mostly small records, some that straddle the 1 KiB pages, a few near the SST's size.
    prop_oneof![8 => 0usize..300, 3 => 300usize..2500, 1 => 2500usize..4000]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (key_index(), value_len()).prop_map(|(key, len)| Op::Put { key, len }),
        5 => key_index().prop_map(Op::Get),
        2 => key_index().prop_map(Op::Delete),
        2 => key_index().prop_map(Op::Exist),
        1 => Just(Op::Flush),
    ]
}

/// Applies `ops` to a device and to the model, checking every answer; returns the device.
fn run(ops: &[Op]) -> Result<LsmInDevice, TestCaseError> {
    let mut dev = LsmInDevice::new(small_lsm_config()).unwrap();
    let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut t: Nanos = 0;
    for (seq, op) in ops.iter().enumerate() {
        t += 1_000;
        match op {
            Op::Put { key: k, len } => {
                let (k, v) = (key(*k), value(seq as u64, (*len).min(dev.max_value_size())));
                let done = dev.store(t, &k, &v).unwrap().done;
                prop_assert!(done >= t);
                t = done;
                model.insert(k, v);
            }
            Op::Get(k) => {
                let k = key(*k);
                let got = dev.retrieve(t, &k).unwrap();
                prop_assert!(got.done >= t);
                t = got.done;
                prop_assert_eq!(got.value.as_ref(), model.get(&k), "get of {:?} after op {}", k, seq);
            }
            Op::Delete(k) => {
                let k = key(*k);
                let got = dev.delete(t, &k).unwrap();
                prop_assert!(got.done >= t);
                t = got.done;
                prop_assert_eq!(got.value, model.remove(&k).is_some(), "delete of {:?}", k);
            }
            Op::Exist(k) => {
                let k = key(*k);
                let got = dev.exist(t, &k).unwrap();
                t = got.done;
                prop_assert_eq!(got.value, model.contains_key(&k));
            }
            Op::Flush => t = dev.flush(t).unwrap(),
        }
    }
    dev.check().map_err(TestCaseError::fail)?;
    for i in 0..KEYS {
        let k = key(i);
        let got = dev.retrieve(t, &k).unwrap();
        t = got.done;
        prop_assert_eq!(got.value.as_ref(), model.get(&k), "final get of {:?}", k);
    }
    t = dev.flush(t).unwrap();
    dev.check().map_err(TestCaseError::fail)?;
    for i in 0..KEYS {
        let k = key(i);
        let got = dev.retrieve(t, &k).unwrap();
        t = got.done;
        prop_assert_eq!(got.value.as_ref(), model.get(&k), "get of {:?} after a flush", k);
    }
    Ok(dev)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn lsm_in_device_matches_a_hashmap(ops in prop::collection::vec(op(), 1..1500)) {
        run(&ops)?;
    }
}

/// A fixed workload long enough that flushes, compactions into several levels and GC run many
/// times, so that the model test above exercises them (asserted here, where the workload is known).
fn long_workload(n: usize) -> Vec<Op> {
    let mut r = Lcg(7);
    let k = |r: &mut Lcg| {
        if r.below(5) < 4 {
            r.below(HOT as u64) as usize
        } else {
            HOT + r.below((KEYS - HOT) as u64) as usize
        }
    };
    (0..n)
        .map(|_| match r.below(20) {
            0..=9 => {
                let len = match r.below(12) {
                    0..=7 => r.below(300),
                    8..=10 => 300 + r.below(2200),
                    _ => 2500 + r.below(1500),
                };
                Op::Put { key: k(&mut r), len: len as usize }
            }
            10..=14 => Op::Get(k(&mut r)),
            15..=16 => Op::Delete(k(&mut r)),
            17..=18 => Op::Exist(k(&mut r)),
            _ => Op::Flush,
        })
        .collect()
}

#[test]
fn flushes_compactions_into_several_levels_and_gc_run_and_every_value_survives() {
    let dev = run(&long_workload(6000)).unwrap();
    let c = dev.counters();
    let s = dev.stats();
    assert!(c.cause(Cause::Host(HostLabel::Flush)).programs > 0 && s.flushes > 100, "{s:?}");
    for level in 1..=5u8 {
        assert!(c.cause(Cause::DeviceCompaction { level }).programs > 0, "compaction into L{level} ran: {s:?}");
        assert!(s.compactions[level as usize] > 0, "{s:?}");
    }
    assert!(c.cause(Cause::Gc).erases > 10 && s.gc_moved_pages > 0, "GC ran and moved pages: {s:?}");
    assert!(dev.media().wear().max_erases > 1, "blocks were reused");
    assert!(s.lookup_ssts_read > 1000, "lookups read SSTs: {s:?}");
    assert!(dev.level_bytes(4) > 0 && dev.level_bytes(5) > 0, "the deep levels hold data");
}

#[test]
fn the_same_workload_gives_the_same_device() {
    let ops = long_workload(3000);
    let (a, b) = (run(&ops).unwrap(), run(&ops).unwrap());
    assert_eq!(a.counters(), b.counters());
    assert_eq!(a.stats(), b.stats());
    assert_eq!(a.media().idle_at(), b.media().idle_at());
}
