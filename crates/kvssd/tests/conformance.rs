//! The conformance suite (`kvssd::conformance`) on every design of this crate, in the small
//! configurations of `common` where GC and compaction run within a case and the device fills
//! within a few hundred stores: PLSC, the LSM in the device (with and without its filters), KVFTL
//! in each variant with its tables in RAM and cached in 64 bytes, and DFTL-KV with its map in RAM
//! and a CMT of two translation pages. A plug-in runs the same suite from its own crate.

mod common;

use common::{kv_variants, small_config, small_dftl_kv, small_dftl_kv_pages, small_kvftl, small_lsm_config};
use kvssd::conformance::run_all;
use kvssd::{DftlKv, KvDevice, Kvftl, LsmConfig, LsmInDevice, Plsc};

#[test]
fn plsc() {
    run_all(&|| Box::new(Plsc::new(small_config()).unwrap()) as Box<dyn KvDevice>);
}

#[test]
fn lsm_in_device() {
    run_all(&|| Box::new(LsmInDevice::new(small_lsm_config()).unwrap()) as Box<dyn KvDevice>);
}

#[test]
fn lsm_in_device_without_filters_an_sst_in_one_plane() {
    let cfg = || LsmConfig { filters: false, stripe: false, ..small_lsm_config() };
    run_all(&|| Box::new(LsmInDevice::new(cfg()).unwrap()) as Box<dyn KvDevice>);
}

#[test]
fn kvftl_in_every_variant() {
    for v in kv_variants() {
        run_all(&|| Box::new(Kvftl::new(small_kvftl(v, None)).unwrap()) as Box<dyn KvDevice>);
    }
}

#[test]
fn kvftl_in_every_variant_with_a_tiny_table_cache() {
    for v in kv_variants() {
        run_all(&|| Box::new(Kvftl::new(small_kvftl(v, Some(64))).unwrap()) as Box<dyn KvDevice>);
    }
}

#[test]
fn dftl_kv() {
    // The entries reading (a CMT of 73 entries, and of 2), and the pages reading (2 pages).
    for ram in [None, Some(1024), Some(28)] {
        run_all(&|| Box::new(DftlKv::new(small_dftl_kv(ram)).unwrap()) as Box<dyn KvDevice>);
    }
    run_all(&|| Box::new(DftlKv::new(small_dftl_kv_pages(Some(1024))).unwrap()) as Box<dyn KvDevice>);
}
