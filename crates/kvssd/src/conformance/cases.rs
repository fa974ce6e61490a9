//! The cases of the conformance suite: each takes a constructor of fresh devices and panics, naming
//! the device and what it did, when the device breaks the `KvDevice` contract.

use flashsim::Nanos;

use crate::conformance::model::{check_ops, delete, key, random_ops, value};
use crate::device::KvDevice;
use crate::error::KvError;

/// Makes a fresh device of the design under test.
pub type Make<'a> = &'a dyn Fn() -> Box<dyn KvDevice>;

/// Seeded sequences [`matches_a_hashmap`] runs, and their length.
const SEEDS: u64 = 24;
const OPS: usize = 2000;

/// The model's values stay at most this long (or the device's limit), so that a device sized for
/// tests holds the model's keys many times over and a random sequence never fills it.
const MODEL_MAX_VALUE: usize = 4096;

/// Random puts, overwrites, deletes, gets, exist calls and flushes, from [`SEEDS`] seeds, each on a
/// fresh device, against the `HashMap` model.
pub fn matches_a_hashmap(make: Make) {
    for seed in 0..SEEDS {
        let mut dev = make();
        let ops = random_ops(seed, OPS, dev.max_value_size().min(MODEL_MAX_VALUE));
        if let Err(e) = check_ops(dev.as_mut(), &ops) {
            panic!("seed {seed}: {e}");
        }
    }
}

/// The contract request by request: an absent key, a store, an overwrite, an empty value, a delete,
/// a second delete, a store after the delete; the same answers after a flush; completions never
/// before arrivals; the device's check passes.
pub fn store_retrieve_delete_exist(make: Make) {
    let mut dev = make();
    let d = dev.as_mut();
    let name = d.name().to_string();
    // Retrieves `k` and asks whether it exists from `now`; returns a time after both completed.
    let expect = |d: &mut dyn KvDevice, now: Nanos, k: &[u8], want: Option<&[u8]>, when: &str| -> Nanos {
        let got = d.retrieve(now, k).unwrap_or_else(|e| panic!("{name}: retrieve {when}: {e}"));
        assert_eq!(got.value.as_deref(), want, "{name}: retrieve of {k:?} {when}");
        assert!(got.done >= now, "{name}: retrieve {when} completed at {}, before {now}", got.done);
        let there = d.exist(got.done, k).unwrap_or_else(|e| panic!("{name}: exist {when}: {e}"));
        assert_eq!(there.value, want.is_some(), "{name}: exist of {k:?} {when}");
        assert!(there.done >= got.done, "{name}: exist {when} completed before it arrived");
        there.done + 1_000
    };
    let done = |r: crate::error::Result<crate::device::Completed<()>>, now: Nanos, what: &str| -> Nanos {
        let c = r.unwrap_or_else(|e| panic!("{name}: {what}: {e}"));
        assert!(c.done >= now, "{name}: {what} completed at {}, before {now}", c.done);
        c.done + 1_000
    };
    let mut now = expect(d, 1_000, b"a", None, "of an absent key");
    match d.delete(now, b"a\x01") {
        Err(KvError::KeyNotFound { done, .. }) => assert!(done >= now, "{name}: KeyNotFound at {done}, before {now}"),
        other => panic!("{name}: delete of an absent key: {other:?}, not KeyNotFound"),
    }
    let e = d.delete(now, b"a\x01").err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(e, "delete: no value is stored under key 'a\\x01'", "{name}");
    let (v1, v2, v3) = (value(1, 100), value(2, 300), value(3, 7));
    now = done(d.store(now, b"a", &v1), now, "store");
    now = expect(d, now, b"a", Some(&v1), "after a store");
    now = done(d.store(now, b"a", &v2), now, "overwrite");
    now = expect(d, now, b"a", Some(&v2), "after an overwrite");
    now = done(d.store(now, b"e", b""), now, "store of an empty value");
    now = expect(d, now, b"e", Some(b""), "after the store of an empty value (an empty value is a value)");
    now = done(d.delete(now, b"a"), now, "delete");
    now = expect(d, now, b"a", None, "after a delete");
    match d.delete(now, b"a") {
        Err(KvError::KeyNotFound { .. }) => {}
        other => panic!("{name}: a second delete: {other:?}, not KeyNotFound"),
    }
    now = done(d.store(now, b"a", &v3), now, "store after a delete");
    now = expect(d, now, b"a", Some(&v3), "after a store that follows a delete");
    now = d.flush(now).unwrap_or_else(|e| panic!("{name}: flush: {e}")) + 1_000;
    now = expect(d, now, b"a", Some(&v3), "after a flush");
    now = expect(d, now, b"e", Some(b""), "after a flush");
    expect(d, now, b"b", None, "after a flush");
    d.check().unwrap_or_else(|e| panic!("{e}"));
}

/// Empty and oversized keys for every request, and a value one byte over the limit, are refused
/// with their limits and change nothing (no flash operation, nothing stored); the largest key and
/// value are accepted and read back, before and after a flush.
pub fn key_and_value_limits(make: Make) {
    let mut dev = make();
    let d = dev.as_mut();
    let name = d.name().to_string();
    let (max_key, max_value) = (d.max_key_size(), d.max_value_size());
    assert!(max_key >= 1, "{name}: a device takes keys of at least one byte");
    let before = *d.counters();
    let long = vec![b'k'; max_key + 1];
    for (k, what) in [(&b""[..], "an empty key"), (&long[..], "a key one byte over the limit")] {
        let refused = [
            ("store", d.store(0, k, b"v").err()),
            ("retrieve", d.retrieve(0, k).err()),
            ("delete", d.delete(0, k).err()),
            ("exist", d.exist(0, k).err()),
        ];
        for (op, e) in refused {
            let ok = match (&e, k.is_empty()) {
                (Some(KvError::EmptyKey { max }), true) => *max == max_key,
                (Some(KvError::KeyTooLarge { len, max }), false) => *len == max_key + 1 && *max == max_key,
                _ => false,
            };
            assert!(ok, "{name}: {op} of {what} (limit {max_key}): {e:?}");
        }
    }
    let e = d.store(0, b"k", &vec![7u8; max_value + 1]).err();
    let refused = matches!(e, Some(KvError::ValueTooLarge { len, max }) if len == max_value + 1 && max == max_value);
    assert!(refused, "{name}: a value one byte over the limit of {max_value}: {e:?}");
    let shown = e.map(|e| e.to_string()).unwrap_or_default();
    assert!(shown.contains(&format!("maximum value size of {max_value} bytes")), "{name}: {shown}");
    assert!(!d.exist(0, b"k").unwrap_or_else(|e| panic!("{name}: exist: {e}")).value, "{name}: nothing stored");
    assert_eq!(*d.counters(), before, "{name}: refused requests did a flash operation");

    let (k, v) = (vec![b'x'; max_key], value(9, max_value));
    let mut t = d.store(0, &k, &v).unwrap_or_else(|e| panic!("{name}: the largest key and value: {e}")).done;
    let got = d.retrieve(t, &k).unwrap_or_else(|e| panic!("{name}: retrieve: {e}"));
    assert!(got.value.as_ref() == Some(&v), "{name}: the largest value does not read back");
    t = d.flush(got.done).unwrap_or_else(|e| panic!("{name}: flush: {e}"));
    let got = d.retrieve(t, &k).unwrap_or_else(|e| panic!("{name}: retrieve after a flush: {e}"));
    assert!(got.value.as_ref() == Some(&v), "{name}: the largest value does not read back after a flush");
    d.check().unwrap_or_else(|e| panic!("{e}"));
}

/// A full device: see [`fill_until_full`].
pub fn full_device(make: Make) {
    fill_until_full(make().as_mut());
}

/// What [`fill_until_full`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Filled {
    /// Values stored before the store that found no room.
    pub stored: usize,
    /// Whether a store succeeded once half of them were deleted (a design whose deletes write
    /// (tombstones, in an LSM) may still be full: that store then fails as full, not otherwise).
    pub room_after_deletes: bool,
}

/// Stores new keys with values of up to 2 KiB on `d` until a store fails for room, and checks the
/// contract of a full device: the failure is a device-full error; the failed key is absent, every
/// value stored before reads back, the check passes. Then deletes half of them and stores once
/// more: that store succeeds or fails as full, and the values left still read back.
pub fn fill_until_full(d: &mut dyn KvDevice) -> Filled {
    let name = d.name().to_string();
    let len = d.max_value_size().min(2048);
    let g = d.media().geometry();
    // Four times the raw capacity in stores of `len` bytes: no device holds that much.
    let limit = 4 * (g.total_blocks() * g.pages_per_block as u64 * g.page_size as u64) / len.max(1) as u64;
    let is_full = |e: &KvError| {
        matches!(e, KvError::NoFreeBlock { .. } | KvError::DeviceFull { .. }) && e.to_string().contains("device full")
    };
    let mut t: Nanos = 0;
    let mut stored = 0usize;
    let err = loop {
        match d.store(t, &key(stored), &value(stored as u64, len)) {
            Ok(c) => t = c.done,
            Err(e) => break e,
        }
        stored += 1;
        assert!((stored as u64) < limit, "{name}: never full after {stored} values of {len} bytes");
    };
    assert!(is_full(&err), "{name}: the store that found no room: {err:?}");
    d.check().unwrap_or_else(|e| panic!("{e} (when full)"));
    let there = d.exist(t, &key(stored)).unwrap_or_else(|e| panic!("{name}: exist: {e}"));
    assert!(!there.value, "{name}: the store that failed left its key");
    let read_back = |d: &mut dyn KvDevice, t: &mut Nanos, from: usize, when: &str| {
        for i in from..stored {
            let got = d.retrieve(*t, &key(i)).unwrap_or_else(|e| panic!("{name}: retrieve of key {i} {when}: {e}"));
            *t = got.done;
            assert!(got.value == Some(value(i as u64, len)), "{name}: key {i} of {stored} lost {when}");
        }
    };
    read_back(d, &mut t, 0, "when the device filled");
    for i in 0..stored / 2 {
        t = delete(d, t, &key(i)).unwrap_or_else(|e| panic!("{name}: delete of key {i} when full: {e}")).0;
    }
    let room_after_deletes = match d.store(t, b"again", &value(7, len)) {
        Ok(c) => {
            t = c.done;
            true
        }
        Err(e) if is_full(&e) => false,
        Err(e) => panic!("{name}: a store after deleting {} of {stored} values: {e:?}", stored / 2),
    };
    read_back(d, &mut t, stored / 2, "after deletes and a store");
    d.check().unwrap_or_else(|e| panic!("{e} (after deletes)"));
    Filled { stored, room_after_deletes }
}

/// The same requests on two fresh devices give the same answers, the same flash counters, the same
/// device work and the same simulated time (determinism).
pub fn same_requests_same_device(make: Make) {
    let (mut a, mut b) = (make(), make());
    let ops = random_ops(99, 2000, a.max_value_size().min(MODEL_MAX_VALUE));
    for dev in [&mut a, &mut b] {
        check_ops(dev.as_mut(), &ops).unwrap_or_else(|e| panic!("{e}"));
    }
    let name = a.name().to_string();
    assert!(a.counters() == b.counters(), "{name}: flash counters differ between identical runs");
    assert!(a.work() == b.work(), "{name}: device work differs between identical runs");
    assert_eq!(a.media().idle_at(), b.media().idle_at(), "{name}: simulated time differs between identical runs");
}
