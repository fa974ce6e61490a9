//! What puts and gets cost on the paper's chip (the `kvftl` preset: 16 KiB pages, read 115 us +
//! 163.84 us transfer, program 1600 us + 163.84 us, one serial chip), with the paper's worked
//! examples: v24 = 22,016 B takes 4 partitions and 4 page reads under KVFTL, 3 under KVFTL-SP;
//! buffered partitions are read from DRAM; DFTL-KV reads ceil(v / page) pages.

use flashsim::{Cause, Nanos};
use kvssd::{DftlKv, DftlKvConfig, KvDevice, KvError, Kvftl, KvftlConfig, Variant};

const READ: Nanos = 115_000 + 163_840;
const PROGRAM: Nanos = 1_600_000 + 163_840;
const GIB: u64 = 1 << 30;

fn kvftl(variant: Variant) -> Kvftl {
    Kvftl::new(KvftlConfig::preset(Some(GIB)).unwrap().with_variant(variant)).unwrap()
}

fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Host page reads, latency and value of a get issued when the device is idle.
fn get_when_idle(dev: &mut dyn KvDevice, key: &[u8]) -> (u64, Nanos, Option<Vec<u8>>) {
    let at = dev.media().idle_at() + 1;
    let before = dev.counters().cause(Cause::HOST).reads;
    let got = dev.retrieve(at, key).unwrap();
    (dev.counters().cause(Cause::HOST).reads - before, got.done - at, got.value)
}

#[test]
fn v24_under_kvftl_four_partitions_three_of_them_buffered_then_four_page_reads() {
    let mut dev = kvftl(Variant::Pure);
    let v24 = bytes(22_016, 1);
    // 16384 B is programmed directly (one page); 4096, 1024 and 512 B wait in their buffers.
    let put = dev.store(0, b"k24", &v24).unwrap();
    assert_eq!(put.done, PROGRAM);
    assert_eq!(dev.counters().cause(Cause::HOST).programs, 1);
    assert_eq!(dev.stats().partitions_per_value.counts, vec![0, 0, 0, 0, 1]);
    let (reads, latency, got) = get_when_idle(&mut dev, b"k24");
    assert_eq!((reads, latency, got.as_ref()), (1, READ, Some(&v24)), "one flash read, three buffer reads");
    assert_eq!(dev.stats().buffer_reads, 3);
    assert_eq!(dev.work().dram_hits, 3);
    // Flushing the buffers programs three pages; now each partition is one page read (Fig. 6a).
    dev.flush(dev.media().idle_at()).unwrap();
    assert_eq!(dev.counters().cause(Cause::HOST).programs, 4);
    let (reads, latency, got) = get_when_idle(&mut dev, b"k24");
    assert_eq!((reads, latency, got), (4, 4 * READ, Some(v24)));
    assert_eq!(dev.stats().utilisation(), 1.0);
    dev.check().unwrap();
}

/// The experiment of buffer reads off: the same v24, its three buffered partitions each charged a
/// page read, as if they were on flash; nothing else changes (programs, buffers, the value).
#[test]
fn with_buffer_reads_off_a_buffered_partition_costs_a_page_read() {
    let cfg = KvftlConfig { buffer_reads: false, ..KvftlConfig::preset(Some(GIB)).unwrap() };
    let mut dev = Kvftl::new(cfg).unwrap();
    let v24 = bytes(22_016, 1);
    assert_eq!(dev.store(0, b"k24", &v24).unwrap().done, PROGRAM);
    let (reads, latency, got) = get_when_idle(&mut dev, b"k24");
    assert_eq!((reads, latency, got), (4, 4 * READ, Some(v24)), "one flash read and three charged");
    let s = dev.stats();
    assert_eq!((s.buffer_reads, s.charged_buffer_reads, dev.work().dram_hits), (0, 3, 0));
    assert_eq!(dev.counters().cause(Cause::HOST).programs, 1, "the buffers stay unprogrammed");
    assert!(dev.describe().contains("buffer reads charged"), "{}", dev.describe());
    dev.check().unwrap();
}

#[test]
fn v24_under_kvftl_sp_three_partitions_and_three_page_reads() {
    let mut dev = kvftl(Variant::SP);
    let v24 = bytes(22_016, 2);
    dev.store(0, b"k24", &v24).unwrap();
    dev.flush(dev.media().idle_at()).unwrap();
    let (reads, latency, got) = get_when_idle(&mut dev, b"k24");
    assert_eq!((reads, latency, got), (3, 3 * READ, Some(v24)));
    let s = dev.stats();
    assert_eq!(s.space.live_alloc_bytes, 16384 + 4096 + 4096);
    assert!((s.utilisation() - 22_016.0 / 24_576.0).abs() < 1e-12, "89.6 %, the paper's \"-10 %\"");
}

/// v25 = 61,441 B under WS 2^12: 32768 + 32768, both external (2 pages each, all programmed); a
/// get reads only the pages holding value bytes (2 + 2: the second partition holds 28,673 B).
#[test]
fn v25_under_ws_programs_whole_partitions_and_reads_the_pages_with_value_bytes() {
    let mut dev = kvftl(Variant::MaxWaste { bytes: 1 << 12 });
    let v25 = bytes(61_441, 3);
    let put = dev.store(0, b"k25", &v25).unwrap();
    assert_eq!(dev.counters().cause(Cause::HOST).programs, 4);
    assert_eq!(put.done, 4 * PROGRAM, "a serial chip");
    let (reads, latency, got) = get_when_idle(&mut dev, b"k25");
    assert_eq!((reads, latency, got), (4, 4 * READ, Some(v25.clone())));
    // Under NP 3 the last partition (16384 for 12,289 B) is one page; 32768 + 16384 + 16384.
    let mut np = kvftl(Variant::NP);
    np.store(0, b"k25", &v25).unwrap();
    let (reads, _, got) = get_when_idle(&mut np, b"k25");
    assert_eq!((reads, got), (2 + 1 + 1, Some(v25)));
}

#[test]
fn the_largest_value_is_one_partition_of_64_pages() {
    let mut dev = kvftl(Variant::Pure);
    let big = bytes(1 << 20, 4);
    dev.store(0, b"big", &big).unwrap();
    assert_eq!(dev.counters().cause(Cause::HOST).programs, 64);
    let (reads, latency, got) = get_when_idle(&mut dev, b"big");
    assert_eq!((reads, latency, got), (64, 64 * READ, Some(big)));
    assert_eq!(dev.stats().partitions_per_value.counts, vec![0, 1]);
}

#[test]
fn delete_and_update_touch_no_flash_with_tables_in_ram() {
    let mut dev = kvftl(Variant::Pure);
    dev.store(0, b"a", &bytes(20_000, 5)).unwrap();
    let t = dev.media().idle_at();
    let before = *dev.counters();
    let del = dev.delete(t, b"a").unwrap();
    assert_eq!(del.done, t, "Alg. 3: no flash access");
    assert_eq!(*dev.counters(), before);
    assert!(matches!(dev.delete(t, b"a").unwrap_err(), KvError::KeyNotFound { done, .. } if done == t));
    assert!(!dev.exist(t, b"a").unwrap().value);
    assert_eq!(dev.retrieve(t, b"a").unwrap().value, None);
    // An update deletes the old value first: only the new one is live.
    dev.store(t, b"b", &bytes(5000, 6)).unwrap();
    dev.store(t, b"b", &bytes(300, 7)).unwrap();
    let s = dev.stats();
    assert_eq!((s.space.live_value_bytes, s.space.live_alloc_bytes), (300, 300));
    assert_eq!(s.space.put_value_bytes, 25_300);
    assert_eq!(dev.retrieve(t, b"b").unwrap().value, Some(bytes(300, 7)));
    dev.check().unwrap();
}

/// With a RAM budget, a get whose table entries are not cached loads their table pages (one page
/// read each, `Cause::Mapping`) before it reads the data.
#[test]
fn a_get_under_a_ram_budget_loads_its_table_pages_first() {
    let mut cfg = KvftlConfig::preset(Some(GIB)).unwrap().with_variant(Variant::WS);
    cfg.ram_budget = Some(16); // two entries
    let mut dev = Kvftl::new(cfg).unwrap();
    dev.store(0, b"a", &bytes(3 * 16384, 8)).unwrap(); // 32768 + 16384: two entries
    dev.store(0, b"b", &bytes(3 * 16384, 9)).unwrap(); // evicts a's entries, storing their pages
    let before = dev.stats().mapping;
    assert_eq!(before.stores, 2, "a's entries evicted: their two table pages (one per block) written back");
    assert_eq!(before.loads, 1, "b's second entry shares a table page with a's, stored a moment before");
    let (reads, latency, got) = get_when_idle(&mut dev, b"a");
    assert_eq!(got, Some(bytes(3 * 16384, 8)));
    assert_eq!(reads, 3);
    assert_eq!(dev.stats().mapping.loads - before.loads, 2, "both of a's table pages loaded");
    assert!(latency >= 5 * READ, "two loads and three data reads, one after the other: {latency}");
}

#[test]
fn dftl_kv_spends_a_page_per_started_page() {
    let mut dev = DftlKv::new(DftlKvConfig::preset(Some(GIB)).unwrap()).unwrap();
    let v24 = bytes(22_016, 10);
    let put = dev.store(0, b"k24", &v24).unwrap();
    assert_eq!(put.done, 2 * PROGRAM);
    let (reads, latency, got) = get_when_idle(&mut dev, b"k24");
    assert_eq!((reads, latency, got), (2, 2 * READ, Some(v24)));
    let s = dev.stats();
    assert!((s.utilisation() - 22_016.0 / 32_768.0).abs() < 1e-12);
    // The GTD: the paper's 208 translation pages, 4 B each, whatever holds a live entry.
    assert_eq!((s.kgtd_bytes, s.gtd_bytes), (26, 832));
    dev.check().unwrap();
}
