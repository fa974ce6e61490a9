//! What a get and a flush cost on flash: a buffered get reads nothing; an unbuffered get reads
//! exactly the UST pages that cover its record; an L0 UST's pages go one per plane and are
//! programmed together.

mod common;

use common::small_config;
use flashsim::{Cause, Nanos};
use kvssd::{KvDevice, Plsc};

#[test]
fn a_buffered_get_reads_no_flash() {
    let mut dev = Plsc::new(small_config()).unwrap();
    dev.store(0, b"key", b"value").unwrap();
    let got = dev.retrieve(1_000, b"key").unwrap();
    assert_eq!(got.value.as_deref(), Some(&b"value"[..]));
    assert_eq!(got.done, 1_000, "answered from DRAM on arrival");
    assert_eq!(dev.counters().reads, 0);
    assert_eq!(dev.stats().buffered_gets, 1);
    assert!(dev.exist(1_000, b"key").unwrap().value);
    // An update in the buffer replaces the record there.
    dev.store(2_000, b"key", b"v2").unwrap();
    assert_eq!(dev.retrieve(3_000, b"key").unwrap().value.as_deref(), Some(&b"v2"[..]));
    assert_eq!((dev.counters().reads, dev.counters().programs), (0, 0));
    assert_eq!(dev.buffered_bytes(), 6 + 3 + 2);
}

/// The records of the test below, back to back in one UST of 1 KiB pages (6-byte header + key +
/// value): a: bytes 0..1007 (page 0); b: 1007..1064 (pages 0 and 1); c: 1064..1081 (page 1);
/// d: 1081..3081 (pages 1, 2 and 3).
fn four_records() -> Vec<(&'static [u8], Vec<u8>)> {
    vec![(b"a", vec![1u8; 1000]), (b"b", vec![2u8; 50]), (b"c", vec![3u8; 10]), (b"d", vec![4u8; 1993])]
}

/// Host page reads, latency and value of a get issued when the device is idle.
fn get_when_idle(dev: &mut Plsc, key: &[u8]) -> (u64, Nanos, Option<Vec<u8>>) {
    let at = dev.media().idle_at() + 1;
    let before = dev.counters().cause(Cause::HOST).reads;
    let got = dev.retrieve(at, key).unwrap();
    (dev.counters().cause(Cause::HOST).reads - before, got.done - at, got.value)
}

#[test]
fn an_l0_ust_goes_one_page_per_plane_programmed_together() {
    let cfg = small_config();
    let (geo, timing) = (cfg.media.geometry.clone(), cfg.media.timing.clone());
    let mut dev = Plsc::new(cfg).unwrap();
    for (k, v) in four_records() {
        dev.store(0, k, &v).unwrap();
    }
    assert_eq!(dev.buffered_bytes(), 3081);
    let done = dev.flush(0).unwrap();
    // ceil(3081 / 1024) = 4 pages, one on each of the 4 planes (page 0 of each plane's first block).
    assert_eq!(dev.counters().cause(Cause::HOST).programs, 4);
    for plane in 0..geo.total_planes() {
        assert_eq!(dev.media().write_pointer(plane * geo.blocks_per_plane), 1, "plane {plane}");
    }
    assert_eq!((dev.ust_count(0), dev.level_pages(0)), (1, 4));
    // Two dies of two planes on two channels: each die takes its two pages in one multi-plane
    // program (two transfers on its channel, one tPROG), and the dies work at the same time.
    let xfer = timing.page_transfer_ns(geo.page_size);
    assert_eq!(dev.counters().multi_plane_ops, 2);
    assert_eq!(done, 2 * xfer + timing.program_ns, "all four pages in the time of one multi-plane program");
}

#[test]
fn an_unbuffered_get_reads_exactly_the_pages_covering_its_record() {
    let cfg = small_config();
    let (geo, timing) = (cfg.media.geometry.clone(), cfg.media.timing.clone());
    let mut dev = Plsc::new(cfg).unwrap();
    let records = four_records();
    for (k, v) in &records {
        dev.store(0, k, v).unwrap();
    }
    dev.flush(0).unwrap();
    let one_page = timing.read_ns + timing.page_transfer_ns(geo.page_size);
    // Page i of the UST is on plane [0, 2, 1, 3][i] (channel first): pages 0 and 2 share die 0,
    // pages 1 and 3 share die 1.
    let expect: [(&[u8], u64, Nanos); 4] = [
        (b"a", 1, one_page),
        (b"b", 2, one_page), // two dies in parallel
        (b"c", 1, one_page),
        (b"d", 3, timing.read_ns + 2 * timing.page_transfer_ns(geo.page_size)), // die 1: a two-plane read
    ];
    for ((key, pages, latency), (k, v)) in expect.into_iter().zip(&records) {
        assert_eq!(key, *k);
        let (reads, took, value) = get_when_idle(&mut dev, key);
        assert_eq!(reads, pages, "pages read for {:?}", String::from_utf8_lossy(key));
        assert_eq!(took, latency, "latency of the get of {:?}", String::from_utf8_lossy(key));
        assert_eq!(value.as_ref(), Some(v), "the value decoded from flash");
    }
    assert_eq!(dev.counters().reads, 1 + 2 + 1 + 3, "gets are the only reads");
    assert_eq!(dev.stats().buffered_gets, 0);
    let (reads, took, value) = get_when_idle(&mut dev, b"missing");
    assert_eq!((reads, took, value), (0, 0, None), "a key the index lacks costs no read");
}

#[test]
fn a_delete_writes_no_tombstone_and_an_update_reads_the_new_version() {
    let mut dev = Plsc::new(small_config()).unwrap();
    for (k, v) in four_records() {
        dev.store(0, k, &v).unwrap();
    }
    let t = dev.flush(0).unwrap();
    let programs = dev.counters().programs;
    dev.delete(t, b"c").unwrap();
    assert_eq!(common::delete(&mut dev, t, b"c"), (t, false));
    assert!(!dev.exist(t, b"c").unwrap().value);
    assert_eq!(dev.retrieve(t, b"c").unwrap().value, None);
    dev.store(t, b"a", b"new a").unwrap();
    let t = dev.flush(t).unwrap();
    assert_eq!(dev.counters().programs, programs + 1, "the delete wrote nothing; the update one page");
    assert_eq!(dev.retrieve(t, b"a").unwrap().value.as_deref(), Some(&b"new a"[..]));
    assert_eq!(dev.knodes(), (3, 0));
    dev.check().unwrap();
}
