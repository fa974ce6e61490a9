//! Remap: a mapping change with no NAND program, whose entries survive GC and power loss.

use flashsim::Ftl;
use flashsim::{BlockSsd, HostLabel, Preset, SsdConfig};

/// Host I/O without a label.
const L: HostLabel = HostLabel::Unlabelled;

fn small_femu() -> BlockSsd {
    let mut cfg = SsdConfig::from_preset(Preset::Femu, Some(64 << 20)).unwrap();
    cfg.spare_factor = 0.25;
    BlockSsd::new(cfg).unwrap()
}

#[test]
fn remap_programs_nothing_and_counts_pages() {
    let mut ssd = small_femu();
    let data: Vec<u8> = (0..8 * 4096).map(|i| (i % 251) as u8).collect();
    let t = ssd.write(0, 100, &data, L).unwrap();
    let before = ssd.counters();
    let t2 = ssd.remap(t, 100, 5000, 8).unwrap();
    let d = ssd.counters().delta(&before);
    assert_eq!((d.flash.programs, d.flash.reads, d.ftl.remapped_pages), (0, 0, 8));
    assert_eq!(t2, t, "a remap is a mapping change: no NAND time");
    assert_eq!(ssd.nvram().remap_entries, 8);
    let mut buf = vec![0; 8 * 4096];
    ssd.read(t2, 5000, &mut buf, L).unwrap();
    assert_eq!(buf, data);
    // Overwriting the source leaves the destination intact, and drops no entry of the destination.
    ssd.write(t2, 100, &vec![9; 4096], L).unwrap();
    ssd.read(t2, 5000, &mut buf, L).unwrap();
    assert_eq!(buf, data);
    // Overwriting the destination retires its log entry.
    ssd.write(t2, 5000, &vec![9; 4096], L).unwrap();
    assert_eq!(ssd.nvram().remap_entries, 7);
    assert!(ssd.nvram().peak_bytes >= 8 * 6);
}

#[test]
fn shared_pages_survive_heavy_gc_and_power_loss() {
    let mut ssd = small_femu();
    let user = ssd.user_pages();
    let page = |tag: u64| -> Vec<u8> { tag.to_le_bytes().repeat(512) };
    let mut t = 0;
    for lpn in 0..64 {
        t = ssd.write(t, lpn, &page(lpn), L).unwrap();
    }
    t = ssd.remap(t, 0, 1000, 64).unwrap();
    // Churn the rest of the device with scattered overwrites so that GC has to relocate the
    // shared pages (greedy GC would never pick their blocks under sequential overwrites).
    let span = user - 2000;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..8 * span {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let lpn = 2000 + x % span;
        t = ssd.write(t, lpn, &page(i), L).unwrap();
    }
    assert!(ssd.counters().ftl.gc_copied_pages > 0);
    ssd.power_cut();
    ssd.check_consistency().unwrap();
    let mut buf = vec![0; 4096];
    for lpn in 0..64 {
        ssd.read(t, lpn, &mut buf, L).unwrap();
        assert_eq!(buf, page(lpn));
        ssd.read(t, 1000 + lpn, &mut buf, L).unwrap();
        assert_eq!(buf, page(lpn));
    }
}
