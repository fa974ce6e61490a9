//! RemapCom's effect on the simulated SSD (seed 000 section 5.2, reduced scale): fillrandom of 1 KiB
//! values, about 32 MB, on a 512 MiB femu device in simulated time, once per mode. With `full` the
//! device programs strictly fewer NAND pages than with `off` and remaps pages instead; `full` cuts the
//! compaction host writes at least as much as `base`. The measured numbers are printed (run with
//! `--nocapture`) for reports.

use flashsim::SimClock;
use lsm::{Db, Options, RemapMode, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{SimFs, SimFsOptions};

const OPS: u64 = 32_000;
const VALUE: usize = 1024;

/// What one run measured.
#[derive(Debug)]
struct Measured {
    nand_programs: u64,
    remapped_pages: u64,
    compaction_host_bytes: u64,
    user_bytes: u64,
    input_blocks: u64,
    output_blocks: u64,
    udbs_found: u64,
    udbs_cloned: u64,
    retentions: u64,
    padding_bytes: u64,
}

fn fillrandom(mode: RemapMode) -> Measured {
    let cfg = flashsim::SsdConfig::from_preset(flashsim::Preset::Femu, Some(512 << 20)).unwrap();
    let sim = SimFs::format(flashsim::BlockSsd::new(cfg).unwrap(), SimClock::new(), SimFsOptions::default()).unwrap();
    let o = Options { create_if_missing: true, align_blocks: true, remap: mode, ..Options::default() };
    let db = Db::open(sim.env(), "db", o).unwrap();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(42);
    let mut value = vec![0u8; VALUE];
    for i in 0..OPS {
        let k = format!("{:016}", rng.next_u64() % 1_000_000_000_000);
        rng.fill_bytes(&mut value[..16]);
        value[16..24].copy_from_slice(&i.to_le_bytes());
        db.put(&WriteOptions::default(), k.as_bytes(), &value).unwrap();
    }
    db.wait_for_background().unwrap();
    let stats = db.stats();
    let sum = |f: fn(&lsm::LevelStats) -> u64| stats.levels.iter().map(f).sum::<u64>();
    let fs_stats = sim.stats();
    let (nand_programs, remapped_pages) = sim.with_device(|d| {
        let c = d.counters();
        (c.flash.programs, c.ftl.remapped_pages)
    });
    // Flushes write into level 0 or deeper but count no blocks: only compactions do.
    Measured {
        nand_programs,
        remapped_pages,
        compaction_host_bytes: fs_stats.compaction_bytes.iter().sum(),
        user_bytes: stats.user_bytes,
        input_blocks: sum(|l| l.input_data_blocks),
        output_blocks: sum(|l| l.output_data_blocks),
        udbs_found: sum(|l| l.udbs_found),
        udbs_cloned: sum(|l| l.udbs_cloned),
        retentions: sum(|l| l.udb_retentions),
        padding_bytes: sum(|l| l.padding_bytes),
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    a as f64 / b.max(1) as f64
}

#[test]
fn full_programs_fewer_pages_than_off_on_fillrandom() {
    let off = fillrandom(RemapMode::Off);
    let base = fillrandom(RemapMode::Base);
    let full = fillrandom(RemapMode::Full);
    for (name, m) in [("off", &off), ("base", &base), ("full", &full)] {
        eprintln!(
            "{name:>4}: nand_programs {} remapped_pages {} compaction host MB {:.2} user MB {:.2} \
             input blocks {} output blocks {} UDBs found {} cloned {} retentions {} padding MB {:.2} \
             UDB ratio inputs {:.3} outputs {:.3}",
            m.nand_programs,
            m.remapped_pages,
            m.compaction_host_bytes as f64 / 1e6,
            m.user_bytes as f64 / 1e6,
            m.input_blocks,
            m.output_blocks,
            m.udbs_found,
            m.udbs_cloned,
            m.retentions,
            m.padding_bytes as f64 / 1e6,
            ratio(m.udbs_found, m.input_blocks),
            ratio(m.udbs_cloned, m.output_blocks),
        );
    }
    assert!(off.input_blocks > 0, "the run compacted");
    assert_eq!(off.remapped_pages, 0);
    assert!(full.remapped_pages > 0, "full remapped no page");
    assert!(
        full.nand_programs < off.nand_programs,
        "full programs {} pages, off {}",
        full.nand_programs,
        off.nand_programs
    );
    assert!(
        full.compaction_host_bytes <= base.compaction_host_bytes,
        "full writes {} compaction bytes, base {}",
        full.compaction_host_bytes,
        base.compaction_host_bytes
    );
    assert!(base.compaction_host_bytes < off.compaction_host_bytes);
    assert!(full.udbs_cloned >= base.udbs_cloned);
}
