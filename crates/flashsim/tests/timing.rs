//! Timing: operations on independent dies overlap; operations on one die queue.

use flashsim::Ftl;
use flashsim::{BlockSsd, Geometry, HostLabel, HostOp, SsdConfig, Timing};

/// Host I/O without a label.
const L: HostLabel = HostLabel::Unlabelled;

const READ_NS: u64 = 40_000;

fn device(channels: u32, chips: u32) -> BlockSsd {
    let geometry = Geometry {
        channels,
        chips_per_channel: chips,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 64,
        pages_per_block: 64,
        page_size: 4096,
        oob_size: 64,
    };
    // 1 ns per byte: a 4 KiB transfer (4.1 us) is small next to the read latency.
    let timing = Timing { read_ns: READ_NS, program_ns: 200_000, erase_ns: 2_000_000, transfer_ps_per_byte: 1_000 };
    BlockSsd::new(SsdConfig::new(geometry, timing)).unwrap()
}

/// Writes `n` pages (striped by the FTL), then issues `n` single-page reads at the same instant.
fn parallel_reads(ssd: &mut BlockSsd, n: u64) -> (u64, u64) {
    let t = ssd.write(0, 0, &vec![1u8; 4096 * n as usize], L).unwrap();
    let t0 = ssd.idle_at().max(t);
    let mut buf = vec![0u8; 4096];
    let last = (0..n).map(|lpn| ssd.read(t0, lpn, &mut buf, L).unwrap()).max().unwrap();
    (t0, last)
}

#[test]
fn reads_on_independent_dies_overlap() {
    let n = 16;
    let mut ssd = device(4, 4); // 16 dies over 4 channels
    let (t0, last) = parallel_reads(&mut ssd, n);
    let elapsed = last - t0;
    // One read latency, plus at most the 4 transfers queued on each channel.
    assert!((READ_NS..READ_NS + 4 * 4_200).contains(&elapsed), "{n} reads on {n} dies took {elapsed} ns");
}

#[test]
fn reads_on_one_die_queue() {
    let n = 16;
    let mut ssd = device(1, 1);
    let (t0, last) = parallel_reads(&mut ssd, n);
    let elapsed = last - t0;
    let per_read = READ_NS + 4_096;
    assert_eq!(elapsed, n * per_read, "{n} reads on one die");
    // The histogram saw the queueing: the slowest read waited for all the others.
    let h = ssd.latencies().summary(HostOp::Read);
    assert_eq!(h.count, n);
    assert!(h.max_us * 1000.0 >= (n * per_read) as f64 * 0.99);
}

#[test]
fn a_multi_page_write_spreads_over_the_dies() {
    let mut wide = device(4, 4);
    let mut narrow = device(1, 1);
    let data = vec![3u8; 4096 * 16];
    let t_wide = wide.write(0, 0, &data, L).unwrap();
    let t_narrow = narrow.write(0, 0, &data, L).unwrap();
    assert!(t_narrow >= 16 * 200_000, "{t_narrow}");
    assert!(t_wide < 2 * (200_000 + 4 * 4_096), "16 programs on 16 dies took {t_wide} ns");
}
