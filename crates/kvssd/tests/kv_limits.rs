//! KVFTL and DFTL-KV refuse bad input and bad configurations with typed errors that name the
//! limit or the field, and change nothing; a full device fails the put that needs room and keeps
//! every value stored before.

mod common;

use common::{kv_variants, small_dftl_kv, small_kvftl, value};
use kvssd::{DftlKv, KvDevice, KvError, Kvftl, Variant};

/// Empty and oversized keys, and a value one byte over the limit, are refused with their limits;
/// the largest value is accepted and read back.
fn refuses_bad_input(dev: &mut dyn KvDevice, max_value: usize) {
    assert_eq!((dev.max_key_size(), dev.max_value_size()), (32, max_value), "{}", dev.name());
    let e = dev.store(0, b"", b"v").unwrap_err();
    assert!(matches!(e, KvError::EmptyKey { max: 32 }), "{e:?}");
    for e in [dev.retrieve(0, b"").unwrap_err(), dev.delete(0, b"").unwrap_err(), dev.exist(0, b"").unwrap_err()] {
        assert!(matches!(e, KvError::EmptyKey { .. }), "{e:?}");
    }
    let long = vec![b'k'; 33];
    assert!(matches!(dev.store(0, &long, b"v").unwrap_err(), KvError::KeyTooLarge { len: 33, max: 32 }));
    let e = dev.store(0, b"k", &vec![7u8; max_value + 1]).unwrap_err();
    assert!(matches!(e, KvError::ValueTooLarge { len, max } if len == max_value + 1 && max == max_value), "{e:?}");
    assert!(e.to_string().contains(&format!("maximum value size of {max_value} bytes")), "{e}");
    assert!(!dev.exist(0, b"k").unwrap().value);
    assert_eq!(dev.counters().programs, 0, "{}: nothing written", dev.name());
    let e = dev.delete(0, b"k\x01").unwrap_err();
    assert!(matches!(e, KvError::KeyNotFound { done: 0, .. }), "{}: {e:?}", dev.name());
    assert_eq!(e.to_string(), "delete: no value is stored under key 'k\\x01'", "{}", dev.name());
    let big = value(1, max_value);
    let done = dev.store(0, b"k", &big).unwrap().done;
    assert_eq!(dev.retrieve(done, b"k").unwrap().value, Some(big));
    let done = dev.store(done, b"e", b"").unwrap().done;
    assert_eq!(dev.retrieve(done, b"e").unwrap().value, Some(Vec::new()), "an empty value is a value");
}

#[test]
fn bad_input_is_refused_with_its_limit() {
    for v in kv_variants() {
        refuses_bad_input(&mut Kvftl::new(small_kvftl(v, None)).unwrap(), 2048);
    }
    refuses_bad_input(&mut DftlKv::new(small_dftl_kv(None)).unwrap(), 2048);
}

#[test]
fn the_largest_value_follows_max_p() {
    let mut cfg = small_kvftl(Variant::Pure, None);
    cfg.max_p = 10;
    let mut dev = Kvftl::new(cfg).unwrap();
    assert_eq!(dev.max_value_size(), 1024);
    assert!(matches!(dev.store(0, b"k", &[0; 1025]).unwrap_err(), KvError::ValueTooLarge { max: 1024, .. }));
    assert_eq!(kvssd::KvftlConfig::preset(None).unwrap().max_value_size(), 1 << 20, "the paper's 1 MiB");
}

#[test]
fn a_bad_configuration_names_its_field() {
    let field = |e: KvError| match e {
        KvError::InvalidConfig { field, .. } => field,
        e => panic!("not a configuration error: {e:?}"),
    };
    let mut cfg = small_kvftl(Variant::Pure, None);
    cfg.min_p = 12;
    let e = Kvftl::new(cfg).err().unwrap();
    assert!(e.to_string().contains("partition range 2^12..2^11 is empty"), "{e}");
    assert_eq!(field(e), "min_p");
    let mut cfg = small_kvftl(Variant::Pure, None);
    cfg.max_p = 12; // 4 KiB partitions in 2 KiB blocks
    assert_eq!(field(Kvftl::new(cfg).err().unwrap()), "max_p");
    let mut cfg = small_kvftl(Variant::Pure, None);
    cfg.max_p = 40;
    assert_eq!(field(Kvftl::new(cfg).err().unwrap()), "max_p");
    let bad_variants = [
        (Variant::SmallestPartition { min_p: 12 }, "variant.min_p"),
        (Variant::MaxPartitions { n: 0 }, "variant.n"),
        (Variant::MaxPartitions { n: 13 }, "variant.n"),
        (Variant::MaxWaste { bytes: 0 }, "variant.bytes"),
        (Variant::MaxWaste { bytes: 4097 }, "variant.bytes"),
    ];
    for (v, name) in bad_variants {
        assert_eq!(field(Kvftl::new(small_kvftl(v, None)).err().unwrap()), name, "{v:?}");
    }
    assert_eq!(field(Kvftl::new(small_kvftl(Variant::Pure, Some(7))).err().unwrap()), "ram_budget");
    let mut cfg = small_kvftl(Variant::Pure, None);
    cfg.media.geometry.page_size = 1000;
    assert_eq!(field(Kvftl::new(cfg).err().unwrap()), "page_size");
    let mut cfg = small_kvftl(Variant::Pure, None);
    cfg.gc_threshold_blocks = 150;
    assert_eq!(field(Kvftl::new(cfg).err().unwrap()), "gc_threshold_blocks");

    let mut cfg = small_dftl_kv(None);
    cfg.media.geometry.page_size = 1000;
    assert_eq!(field(DftlKv::new(cfg).err().unwrap()), "page_size");
    assert_eq!(field(DftlKv::new(small_dftl_kv(Some(511))).err().unwrap()), "ram_budget");
}

/// Fills `dev` with 2 KiB values under new keys until a put fails for room; then every stored
/// value is still there, the failed key is absent, an update of a stored key fails the same way
/// keeping... nothing of its old value (documented), and the device's check passes.
fn fills_up<D: KvDevice>(dev: &mut D, check: impl Fn(&D) -> Result<(), String>) -> usize {
    let mut t = 0;
    let mut stored = 0;
    let err = loop {
        let k = format!("key{stored}");
        match dev.store(t, k.as_bytes(), &value(stored as u64, 2048)) {
            Ok(c) => t = c.done,
            Err(e) => break e,
        }
        stored += 1;
        assert!(stored < 10_000, "{}: never full", dev.name());
    };
    assert!(matches!(err, KvError::NoFreeBlock { .. } | KvError::DeviceFull { .. }), "{err:?}");
    assert!(err.to_string().contains("device full"), "{err}");
    check(dev).unwrap();
    assert!(!dev.exist(t, format!("key{stored}").as_bytes()).unwrap().value);
    for i in 0..stored {
        let got = dev.retrieve(t, format!("key{i}").as_bytes()).unwrap();
        t = got.done;
        assert_eq!(got.value, Some(value(i as u64, 2048)), "{}: key{i}", dev.name());
    }
    // Deleting makes room again.
    for i in 0..stored / 2 {
        dev.delete(t, format!("key{i}").as_bytes()).unwrap();
    }
    dev.store(t, b"again", &value(7, 2048)).unwrap();
    check(dev).unwrap();
    stored
}

#[test]
fn a_full_device_fails_the_put_and_keeps_what_it_stored() {
    for v in kv_variants() {
        for ram in [None, Some(512)] {
            let n = fills_up(&mut Kvftl::new(small_kvftl(v, ram)).unwrap(), |d| d.check());
            // 160 blocks of 2 KiB: less the GC threshold, the running blocks and the reserve.
            assert!(n > 60, "{v} {ram:?}: only {n} values of 2 KiB fit");
        }
    }
    for ram in [None, Some(1024)] {
        let n = fills_up(&mut DftlKv::new(small_dftl_kv(ram)).unwrap(), |d| d.check());
        assert!(n > 60, "dftl-kv {ram:?}: only {n} values of 2 KiB fit");
    }
}
