//! KVFTL's and DFTL-KV's limits: the largest value follows KVFTL's largest partition, bad
//! configurations are typed errors that name the field, and a full device (the conformance
//! suite's contract, `kvssd::conformance::fill_until_full`) holds what the small device should.
//! Bad keys and values are the suite's (tests/conformance.rs).

mod common;

use common::{kv_variants, small_dftl_kv, small_dftl_kv_pages, small_kvftl};
use kvssd::conformance::fill_until_full;
use kvssd::{DftlKv, KvDevice, KvError, Kvftl, Variant};

#[test]
fn the_small_devices_take_keys_of_32_bytes_and_values_of_2_kib() {
    for v in kv_variants() {
        let dev = Kvftl::new(small_kvftl(v, None)).unwrap();
        assert_eq!((dev.max_key_size(), dev.max_value_size()), (32, 2048), "{v}");
    }
    let dev = DftlKv::new(small_dftl_kv(None)).unwrap();
    assert_eq!((dev.max_key_size(), dev.max_value_size()), (32, 2048));
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
    assert_eq!(field(DftlKv::new(small_dftl_kv(Some(13))).err().unwrap()), "ram_budget");
    assert_eq!(field(DftlKv::new(small_dftl_kv_pages(Some(511))).err().unwrap()), "ram_budget");
}

#[test]
fn a_full_device_fails_the_put_and_keeps_what_it_stored() {
    for v in kv_variants() {
        for ram in [None, Some(512)] {
            let full = fill_until_full(&mut Kvftl::new(small_kvftl(v, ram)).unwrap());
            // 160 blocks of 2 KiB: less the GC threshold, the running blocks and the reserve.
            assert!(full.stored > 60, "{v} {ram:?}: only {} values of 2 KiB fit", full.stored);
            assert!(full.room_after_deletes, "{v} {ram:?}: deletes made no room");
        }
    }
    for ram in [None, Some(1024)] {
        let full = fill_until_full(&mut DftlKv::new(small_dftl_kv(ram)).unwrap());
        assert!(full.stored > 60, "dftl-kv {ram:?}: only {} values of 2 KiB fit", full.stored);
        assert!(full.room_after_deletes, "dftl-kv {ram:?}: deletes made no room");
    }
}
