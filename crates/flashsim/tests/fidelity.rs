//! Fidelity: greedy GC under uniform random single-page overwrites must reach the analytic
//! large-block limit of write amplification (Xiang & Kurkoski 2012) within 5 %, measured as in the
//! reference Monte Carlo: sequential fill, then 12 capacity-writes of uniform overwrites, WA over
//! the second half. 256 pages per block; a single plane so that the whole spare area serves one GC
//! domain, as in the model; metadata-only so that it runs in seconds.

use flashsim::theory::greedy_wa_limit;
use flashsim::{BlockSsd, DataMode, GcPolicy, Geometry, SsdConfig, Timing};
use rand::{Rng, SeedableRng};

fn measured_wa(spare_factor: f64, blocks: u32, policy: GcPolicy, seed: u64) -> f64 {
    let geometry = Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: blocks,
        pages_per_block: 256,
        page_size: 4096,
        oob_size: 128,
    };
    let timing = Timing { read_ns: 40_000, program_ns: 200_000, erase_ns: 2_000_000, transfer_ps_per_byte: 0 };
    let mut cfg = SsdConfig::new(geometry, timing);
    cfg.spare_factor = spare_factor;
    cfg.gc_policy = policy;
    cfg.gc_reserve_blocks = 2;
    cfg.gc_background_blocks = 2;
    cfg.data = DataMode::MetadataOnly;
    let mut ssd = BlockSsd::new(cfg).unwrap();
    let user = ssd.user_pages();
    let mut t = 0;
    for lpn in 0..user {
        t = ssd.write_no_data(t, lpn, 1).unwrap();
    }
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let writes = 12 * user;
    let mut start = *ssd.counters();
    for i in 0..writes {
        if i == writes / 2 {
            start = *ssd.counters();
        }
        let lpn = rng.next_u64() % user;
        t = ssd.write_no_data(t, lpn, 1).unwrap();
    }
    ssd.counters().delta(&start).write_amplification().unwrap()
}

#[test]
fn greedy_gc_reaches_the_large_block_limit() {
    for sf in [0.07, 0.10, 0.20, 0.28] {
        let theory = greedy_wa_limit(sf);
        let got = measured_wa(sf, 1024, GcPolicy::Greedy, 42);
        let err = (got - theory).abs() / theory;
        println!("S_f {sf}: measured {got:.3}, limit {theory:.3}, error {:.2} %", err * 100.0);
        assert!(err < 0.05, "S_f {sf}: measured WA {got:.3} vs limit {theory:.3} ({:.1} % off)", err * 100.0);
    }
}

#[test]
fn more_spare_means_less_amplification_for_every_policy() {
    for policy in [GcPolicy::Greedy, GcPolicy::CostBenefit, GcPolicy::Fifo] {
        let low = measured_wa(0.10, 128, policy, 7);
        let high = measured_wa(0.28, 128, policy, 7);
        assert!(high < low, "{policy:?}: WA {high} at S_f 0.28 is not below {low} at 0.10");
        assert!(high > 1.0, "{policy:?}: WA {high} cannot be below 1 under overwrites");
    }
}
