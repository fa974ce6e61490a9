//! Request sequences for the `HashMap` model (`kvssd::conformance::model`, which checks every
//! answer, every completion time and the device's own consistency before and after a final
//! flush): proptest strategies and fixed long workloads of the mixes the designs' tests use. Keys
//! `0..HOT` are written often, the others rarely, so that rare keys stay valid (or sink deep) for
//! long and GC and compaction meet them.

use kvssd::conformance::model::check_ops;
pub use kvssd::conformance::model::Op;
use kvssd::KvDevice;
use proptest::prelude::*;

use super::Lcg;

pub const KEYS: usize = 48;
pub const HOT: usize = 8;

fn key_index() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 0..HOT, 1 => HOT..KEYS]
}

fn value_len() -> impl Strategy<Value = usize> {
    // Mostly small records, some that straddle the 1 KiB pages, a few near the buffer's size.
    prop_oneof![8 => 0usize..300, 3 => 300usize..2500, 1 => 2500usize..4000]
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (key_index(), value_len()).prop_map(|(key, len)| Op::Put { key, len }),
        5 => key_index().prop_map(Op::Get),
        2 => key_index().prop_map(Op::Delete),
        2 => key_index().prop_map(Op::Exist),
        1 => Just(Op::Flush),
    ]
}

/// Value lengths for the partitioned devices on [`super::kv_geometry`] (512-byte pages, 2 KiB
/// blocks): many tiny values (partitions of a few bytes), values inside a page, across pages, and
/// up to the 2 KiB maximum (`run` clamps to the device's).
pub fn kv_value_len() -> impl Strategy<Value = usize> {
    prop_oneof![3 => 0usize..64, 4 => 64usize..512, 3 => 512usize..1500, 1 => 1500usize..=2048]
}

/// Keys of the partitioned devices' mix ([`kv_op`]): enough that their live values fill a good
/// part of [`super::kv_geometry`]'s device, so that GC victims hold valid partitions to move.
pub const KV_KEYS: usize = 160;
pub const KV_HOT: usize = 16;

/// The mix for KVFTL and DFTL-KV: the model's, over [`KV_KEYS`] keys with lengths from
/// [`kv_value_len`], and flushes rare (a flush programs half-full page buffers, which a device
/// does only at a power failure, and wastes the rest of their pages).
pub fn kv_op() -> impl Strategy<Value = Op> {
    let key = || prop_oneof![4 => 0..KV_HOT, 1 => KV_HOT..KV_KEYS];
    prop_oneof![
        100 => (key(), kv_value_len()).prop_map(|(key, len)| Op::Put { key, len }),
        50 => key().prop_map(Op::Get),
        20 => key().prop_map(Op::Delete),
        20 => key().prop_map(Op::Exist),
        1 => Just(Op::Flush),
    ]
}

/// Applies `ops` to `dev` and to the model (`kvssd::conformance::model::check_ops`), checking
/// every answer and the device's consistency; returns the device.
pub fn run<D: KvDevice + 'static>(mut dev: D, ops: &[Op]) -> Result<D, TestCaseError> {
    check_ops(&mut dev, ops).map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(dev)
}

/// A fixed workload of `n` operations with the strategy's mix, long enough that compaction and GC
/// run many times (the deterministic tests assert it, where the workload is known).
pub fn long_workload(n: usize) -> Vec<Op> {
    long_workload_with(n, |r| match r.below(12) {
        0..=7 => r.below(300),
        8..=10 => 300 + r.below(2200),
        _ => 2500 + r.below(1500),
    } as usize)
}

/// [`kv_op`]'s mix as a fixed workload (a flush every 200 operations or so).
pub fn long_kv_workload(n: usize) -> Vec<Op> {
    let mut r = Lcg(7);
    let k = |r: &mut Lcg| {
        if r.below(5) < 4 {
            r.below(KV_HOT as u64) as usize
        } else {
            KV_HOT + r.below((KV_KEYS - KV_HOT) as u64) as usize
        }
    };
    (0..n)
        .map(|_| match r.below(191) {
            0..=99 => {
                let len = match r.below(11) {
                    0..=2 => r.below(64),
                    3..=6 => 64 + r.below(448),
                    7..=9 => 512 + r.below(988),
                    _ => 1500 + r.below(549),
                } as usize;
                Op::Put { key: k(&mut r), len }
            }
            100..=149 => Op::Get(k(&mut r)),
            150..=169 => Op::Delete(k(&mut r)),
            170..=189 => Op::Exist(k(&mut r)),
            _ => Op::Flush,
        })
        .collect()
}

fn long_workload_with(n: usize, mut len: impl FnMut(&mut Lcg) -> usize) -> Vec<Op> {
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
                let len = len(&mut r);
                Op::Put { key: k(&mut r), len }
            }
            10..=14 => Op::Get(k(&mut r)),
            15..=16 => Op::Delete(k(&mut r)),
            17..=18 => Op::Exist(k(&mut r)),
            _ => Op::Flush,
        })
        .collect()
}
