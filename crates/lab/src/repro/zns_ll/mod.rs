//! `flashkv repro zns-ll`: seed 003's comparison of LSM compaction strategies on a ZNS SSD (BL, GC,
//! LS, Gear, LL, and beyond the seed leveled compaction with ZenFS's lifetime placement), on the
//! simulated ZNS SSD with ZoneFs, beside the paper's numbers.
//!
//! The seed ran LevelDB 1.19 (16-byte keys, 512-byte values, 4 MiB SSTs, 64 MiB zones) writing 27
//! GB with db_bench fillrandom on a Cosmos+ ZNS SSD whose capacity, timings and zone limits it does
//! not give. Ours (each labelled in the report): the femu preset's NAND (64 planes, 4 KiB pages,
//! 40 / 200 / 2000 us) with 1 MiB erase blocks and zones of one block per plane (64 MiB), a 24 GiB
//! device (384 zones, 1.5 times the fillrandom's live data, so that the GC and LS rows must
//! collect zones), 14 open and active zones, host GC when 8 empty zones are left,
//! LevelDB's level sizes (10 MiB level 1, x10 per level, L0 triggers 4 / 8 / 12) and the authors'
//! fork's 12 MiB write buffer. BL runs without GC, which the seed's "zones are reused only when
//! fully invalid" allows only on a device that never fills: it gets twice the capacity. A seventh
//! row runs Gear on 28 GiB: before issue 28 our Gear's compaction windows were key ranges, its
//! zones never emptied whole, and at 24 GiB it ran out of zones; with GearDB's windows (a level's
//! oldest zones) it needs no host GC at either capacity.
//!
//! `small` divides every size by 16 except the page: the erase block too (64 KiB), so that a
//! zone (4 MiB) still stripes over all 64 planes and the device keeps 512 zones. A zone reset
//! erases as many blocks as at the paper's scale, over a sixteenth of the data, so erases weigh 16
//! times more per byte written: every row pays it in proportion to the zones it fills.

use workload::db_bench::DbBenchKind;
use workload::{ValueSize, Workload, YcsbWorkload};

use crate::error::Result;
use crate::report::model::ResultSet;
use crate::result::RunResult;
use crate::spec::{Bytes, BytesOrOff, DeviceSpec, EngineSpec, FsKind, Named, RunSpec, Store, WorkloadSpec, ZoneGc};

use super::{Context, Repro, Run, Runs, Scale};

mod report;
use report::{fillrandom, ycsb_table};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The seed's numbers, each with the slide it comes from: LL's fillrandom speed-up over another
/// row ("Overall Performance (Fill-random Workload)": 1.4x vs LS, 1.8x vs Gear; "1.7x better
/// performance by avoiding zone GCs" for GC; Gear-28 is Gear on a larger device).
const PAPER_FILL_SPEEDUP: [(&str, f64); 4] = [("LS", 1.4), ("Gear", 1.8), ("Gear-28", 1.8), ("GC", 1.7)];
/// "Performance (YCSB Workload)": LL's speed-up over GC, 1.22x to 1.65x.
const PAPER_YCSB_SPEEDUP: (f64, f64) = (1.22, 1.65);

/// Divisors of the paper's sizes: small keeps its ratios at 1/16, tiny (for tests) at 1/64.
pub const SCALES: [(&str, u64); 3] = [("small", 16), ("paper", 1), ("tiny", 64)];

/// The seed's workload: 16-byte keys (db_bench's), 512-byte values, 27 GB written.
const VALUE: u32 = 512;
const KV: u64 = 16 + VALUE as u64;
const PAPER_DATA: u64 = 27_000_000_000;
/// Our device at the paper's scale (the seed is silent; the reference file asks for a capacity
/// that forces GC in the GC and LS rows): 384 zones of 64 MiB, 1.5 times the fillrandom's live
/// data (about 16 GiB). LS without GC fills 371 zones at the small scale, so GC (at 8 empty zones)
/// must run; at 416 zones it never did.
const PAPER_DEVICE: u64 = 24 * GIB;
/// BL has no GC and must never fill: twice the others' capacity.
const PAPER_BL_DEVICE: u64 = 2 * PAPER_DEVICE;
/// Gear's second device: before issue 28, at 24 GiB Gear ran out of zones (measured at the small
/// scale) and at 28 GiB it finished; with GearDB's compaction windows both run without host GC.
const PAPER_GEAR_DEVICE: u64 = 28 * GIB;
/// Host GC runs when this many empty zones are left (the seed is silent; the reference notes say
/// one, which leaves nothing for the other placement classes that may need a zone before GC has
/// freed one: our choice, a reserve for the classes that write at once).
const GC_FREE_ZONES: u32 = 8;
/// The tiny (test) scale's 64 KiB SSTs and 1 MiB zones cost more space per byte of data (padding,
/// metadata, zones held open): its device gets this much more room, so that the test runs to the
/// end. It is not a scale to compare with the paper.
const TINY_ROOM: (u64, u64) = (3, 2);
/// Open and active zone limits (the seed is silent; a WD ZN540's).
const MAX_ACTIVE_ZONES: u32 = 14;

/// The host's page cache: seed 003's "1.5GB memory cache" (Table 1), scaled with the rest. The
/// ZenFS row has it too, and bypasses it: ZenFS opens its files for direct I/O.
const PAPER_PAGE_CACHE: u64 = 1536 * MIB;

/// One compared configuration: a compaction strategy on a zone placement, with or without host GC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub name: &'static str,
    pub compaction: &'static str,
    pub placement: &'static str,
    pub gc: bool,
    /// Device capacity at the paper's scale.
    pub device: u64,
    /// What the row stands for.
    pub about: &'static str,
}

/// Seed 003's five rows, our sixth, and Gear again on a larger device.
pub const ROWS: [Row; 7] = [
    Row {
        name: "BL",
        compaction: "leveled",
        placement: "shared",
        gc: false,
        device: PAPER_BL_DEVICE,
        about: "LevelDB; zones reused only when fully invalid (no GC)",
    },
    Row {
        name: "GC",
        compaction: "leveled",
        placement: "shared",
        gc: true,
        device: PAPER_DEVICE,
        about: "LevelDB + greedy host zone GC",
    },
    Row {
        name: "LS",
        compaction: "leveled",
        placement: "per-level",
        gc: true,
        device: PAPER_DEVICE,
        about: "GC + zones dedicated per level",
    },
    Row {
        name: "Gear",
        compaction: "gear",
        placement: "per-level",
        gc: true,
        device: PAPER_DEVICE,
        about: "GearDB's gear compaction, compaction windows of a level's oldest zones, zones per level, GC",
    },
    Row {
        name: "LL",
        compaction: "ll",
        placement: "per-level",
        gc: true,
        device: PAPER_DEVICE,
        about: "lifetime-leveling: zones per level, compaction pointers, T-zone, GC",
    },
    Row {
        name: "ZenFS",
        compaction: "leveled",
        placement: "lifetime",
        gc: true,
        device: PAPER_DEVICE,
        about: "beyond the seed: leveled compaction with ZenFS's lifetime-hint placement, GC",
    },
    Row {
        name: "Gear-28",
        compaction: "gear",
        placement: "per-level",
        gc: true,
        device: PAPER_GEAR_DEVICE,
        about: "Gear on a 28 GiB device (before issue 28 Gear needed the room)",
    },
];

fn row(name: &str) -> Row {
    ROWS.into_iter().find(|r| r.name == name).expect("a row of ROWS")
}

/// The run of `row` at `scale`: `workload` with `records` (and `ops` operations after a load).
pub fn spec(scale: &Scale, row: Row, store: &Store, workload: Workload, records: u64, ops: u64) -> RunSpec {
    let mut device = scale.size(row.device);
    if scale.name == "tiny" {
        device = device * TINY_ROOM.0 / TINY_ROOM.1;
    }
    let device = DeviceSpec {
        fs: FsKind::Zone,
        capacity: Some(Bytes(device)),
        // Zero values: the same counts and simulated time as generated ones, and the device keeps
        // only keys and headers in memory, so the paper's scale runs without spilling to disk.
        store: store.clone().for_zero_values(),
        zone_size: Some(Bytes(scale.size(64 * MIB))),
        block_size: Some(Bytes(scale.size(MIB))),
        zone_policy: storage::AllocPolicy::parse_name(row.placement).expect("ROWS name known placements"),
        zone_gc: if row.gc { ZoneGc::AtFreeZones(GC_FREE_ZONES) } else { ZoneGc::Off },
        page_cache: BytesOrOff(scale.size(PAPER_PAGE_CACHE)),
        max_open_zones: Some(MAX_ACTIVE_ZONES),
        max_active_zones: Some(MAX_ACTIVE_ZONES),
        ..DeviceSpec::default()
    };
    let size = |b: u64| Some(Bytes(scale.size(b)));
    let engine = EngineSpec {
        // The paper ran LevelDB 1.19: its write triggers too, so that per-level writes are LevelDB's.
        profile: lsm::Profile::LevelDb,
        lsm: lsm::OptionOverrides {
            compaction: row.compaction.parse().expect("ROWS name known strategies"),
            write_buffer_size: size(12 * MIB),
            max_file_size: size(4 * MIB),
            max_bytes_for_level_base: size(10 * MIB),
            block_size: Some(Bytes(4096)),
            // ZenFS opens its files for direct I/O.
            direct_reads: row.placement == "lifetime",
            direct_writes: row.placement == "lifetime",
            ..lsm::OptionOverrides::default()
        },
        ..EngineSpec::default()
    };
    let workload = WorkloadSpec::new(workload.into(), records, ops)
        .with_values(ValueSize::Fixed(VALUE), workload::ValueData::Zeros);
    RunSpec { digest: true, ..RunSpec::new(engine, device, workload) }
}

fn describe(scale: &Scale) -> String {
    let s = |b: u64| crate::spec::format_size(scale.size(b));
    format!(
        "{} scale: {} of fillrandom (16 B keys, 512 B values) on a {} ZNS SSD (BL: {}, Gear-28: {}), {} zones of \
         {} erase blocks, {} SSTs, {} write buffer, {} level 1",
        scale.name,
        crate::spec::format_size(scale.size(PAPER_DATA) / MIB * MIB),
        s(PAPER_DEVICE),
        s(PAPER_BL_DEVICE),
        s(PAPER_GEAR_DEVICE),
        s(64 * MIB),
        s(MIB),
        s(4 * MIB),
        s(12 * MIB),
        s(10 * MIB)
    )
}

/// Seed 003's comparison, as a repro.
pub struct ZnsLl;

/// The runs in plan order: fillrandom on every row, then each YCSB workload on GC and LL, with
/// their record and operation counts.
fn plan(scale: &Scale) -> Vec<(String, Row, Workload, u64, u64)> {
    let fill_records = scale.size(PAPER_DATA) / KV;
    // YCSB (the seed names neither workloads' sizes nor counts; ours): as many records as the
    // fillrandom leaves live (1 - 1/e of its keys), and a quarter as many operations.
    let ycsb_records = fill_records * 632 / 1000;
    let ycsb_ops = ycsb_records / 4;
    let fill = Workload::DbBench(DbBenchKind::FillRandom);
    let mut plan: Vec<_> = ROWS.iter().map(|r| (format!("fillrandom {}", r.name), *r, fill, fill_records, 0)).collect();
    for w in YcsbWorkload::ALL {
        for r in [row("GC"), row("LL")] {
            plan.push((format!("ycsb {} {}", w.name(), r.name), r, Workload::Ycsb(w), ycsb_records, ycsb_ops));
        }
    }
    plan
}

impl Repro for ZnsLl {
    fn title(&self) -> &'static str {
        "Lifetime-leveling compaction on a ZNS SSD (seed 003): BL, GC, LS, Gear, LL and ZenFS placement"
    }

    fn name(&self) -> &'static str {
        "zns-ll"
    }

    fn scales(&self) -> &'static [(&'static str, u64)] {
        &SCALES
    }

    fn parts(&self) -> std::result::Result<&'static [&'static str], &'static str> {
        Ok(&PARTS)
    }

    fn runs(&self, c: &Context) -> Result<Vec<Run>> {
        Ok(plan(&c.scale)
            .into_iter()
            .filter(|p| wanted(c, &p.1, p.2))
            .map(|(key, r, w, records, ops)| Run::new(key, spec(&c.scale, r, &c.store, w, records, ops)))
            .collect())
    }

    /// The tables and figures of the parts asked for: a part left out is absent, not "failed".
    fn report(&self, c: &Context, runs: &Runs) -> Result<ResultSet> {
        let plan = plan(&c.scale);
        let results: Vec<Option<RunResult>> = plan.iter().map(|p| runs.get(&p.0).cloned()).collect();
        let (fills, ycsb_results) = results.split_at(ROWS.len());
        let mut set = ResultSet { scale: describe(&c.scale), notes: notes(), ..Default::default() };
        let fill = Workload::DbBench(DbBenchKind::FillRandom);
        let asked: Vec<bool> = ROWS.iter().map(|r| wanted(c, r, fill)).collect();
        if asked.contains(&true) {
            fillrandom(&mut set, fills, &asked);
        }
        // YCSB's plan entries come in (GC, LL) pairs, one pair per workload of YcsbWorkload::ALL.
        let (workloads, pairs): (Vec<YcsbWorkload>, Vec<&[Option<RunResult>]>) = YcsbWorkload::ALL
            .into_iter()
            .zip(ycsb_results.chunks(2))
            .filter(|(w, _)| wanted(c, &row("GC"), Workload::Ycsb(*w)))
            .unzip();
        if !workloads.is_empty() {
            ycsb_table(&mut set, &workloads, &pairs.concat());
        }
        Ok(set)
    }
}

/// What `--only` picks: the fillrandom rows or one of them, every YCSB workload, or one YCSB
/// workload (on GC and LL). A paper-scale run takes up to hours, so a few fit a working session.
const PARTS: [&str; 16] = [
    "fillrandom",
    "fillrandom-BL",
    "fillrandom-GC",
    "fillrandom-LS",
    "fillrandom-Gear",
    "fillrandom-LL",
    "fillrandom-ZenFS",
    "fillrandom-Gear-28",
    "ycsb",
    "ycsb-load",
    "ycsb-a",
    "ycsb-b",
    "ycsb-c",
    "ycsb-d",
    "ycsb-e",
    "ycsb-f",
];

/// Whether the run of `workload` on `row` belongs to a part asked for.
fn wanted(c: &Context, row: &Row, workload: Workload) -> bool {
    match workload {
        Workload::Ycsb(w) => c.wants("ycsb") || c.wants(&format!("ycsb-{}", w.name())),
        _ => c.wants("fillrandom") || c.wants(&format!("fillrandom-{}", row.name)),
    }
}

fn notes() -> Vec<String> {
    [
        "Throughput is operations per simulated second (the fillrandom phase, background work included).",
        crate::result::SIMULATED_TIME_NOTE,
        "The host's page cache is the seed's \"1.5GB memory cache\" (1.5 GiB at the paper's scale, scaled with the \
         rest): CLOCK, Linux's readahead (128 KiB) and dirty write-back (10 % background ratio, 30 s expiry). The \
         ZenFS row bypasses it: ZenFS opens its files for direct I/O (the engine's direct_reads and direct_writes).",
        "Our choices where the seed is silent: device capacity 24 GiB at the paper's scale (384 zones), 1.5 times \
         the fillrandom's live data, so that the GC and LS rows must collect zones (48 GiB for BL, which has no GC \
         and must never fill), the femu preset's NAND timings, 14 open and active zones (a WD ZN540's limits), host \
         GC when 8 empty zones are left (the reference notes say 1, which leaves no zone for the other placement \
         classes while GC works), greedy victim (least live data, among full zones and partly written zones no file \
         writes any more), 12 MiB write buffer (the authors' fork), YCSB with 512 B values, as many records as \
         fillrandom leaves live and a quarter as many operations. The tiny (test) scale gives its devices 1.5 times \
         more room.",
        "Gear's compaction windows are GearDB's (the authors' code): a level's oldest zones, a quarter of them from \
         level 3 down and the whole level above, on zones per level; in the engine, which does not see zones, a \
         level's oldest SSTs by file number, a quarter of its bytes (its zone stream is written in that order). \
         Gear compactions rewrite the oldest zones' SSTs, so those zones empty whole and Gear needs no host GC. \
         Until issue 28 the window was the run of SSTs from the level's compaction pointer (a key range): it left \
         holes in zones of every age, Gear needed host GC (19.7 GB copied at the small scale, WA 32) and at some \
         capacities ran out of zones, hence row Gear-28 on 28 GiB (448 zones), kept for comparison. Our choices: \
         the window is recomputed for every compaction, and a passive compaction takes one run of window SSTs in \
         key order (the authors' code keeps a window until its zones are freed and passes down every run).",
        "Zone utilisation = live bytes of a zone / zone capacity, over the data zones in use at the end of the run \
         (as the authors' fork measures it). Space amplification = bytes written in used data zones / live bytes.",
        "Write amplification = flash page programs x page size / user bytes; the device has no GC, so every byte \
         beyond the engine's own writes is the host's zone GC.",
        "The small scale divides the erase block by 16 with everything else, so that zones stripe over every plane: \
         each zone reset then erases the same number of blocks over a sixteenth of the data.",
        super::ZERO_VALUES_NOTE,
    ]
    .map(String::from)
    .to_vec()
}

#[cfg(test)]
mod tests {
    use super::report::thrashing;
    use super::*;
    use crate::report::model::Cell;
    use crate::result::HostWrites;

    /// A row that failed (out of zones, say) leaves "failed" in its cells and in every ratio that
    /// needs it; the other rows are still reported.
    #[test]
    fn a_failed_row_is_reported_not_fatal() {
        let tiny = Scale::parse("tiny", &SCALES).unwrap();
        let fill = Workload::DbBench(DbBenchKind::FillRandom);
        let (r, _) = crate::runner::run(&spec(&tiny, row("LL"), &Store::Memory, fill, 2_000, 0), false).unwrap();
        let mut fills: Vec<Option<RunResult>> = vec![Some(r.clone()); ROWS.len()];
        fills[2] = None; // LS
        let mut set = ResultSet::default();
        fillrandom(&mut set, &fills, &[true; ROWS.len()]);
        ycsb_table(&mut set, &[YcsbWorkload::A], &[Some(r), None]);
        let table = |name: &str| set.tables.iter().find(|t| t.name.starts_with(name)).unwrap();
        let text = |c: &Cell| match c {
            Cell::Text(t) => t.clone(),
            Cell::Number(n) => n.to_string(),
        };
        let fill_rows = &table("fillrandom:").rows;
        assert_eq!(fill_rows.len(), ROWS.len());
        assert_eq!(text(&fill_rows[2][2]), "failed");
        assert_ne!(text(&fill_rows[4][2]), "failed");
        assert_eq!(text(&fill_rows[4][3]), "1", "LL against itself");
        let paper = &table("beside the paper").rows;
        assert_eq!(text(&paper[0][2]), "failed", "LL / LS needs LS");
        assert_eq!(text(&paper[2][2]), "1", "LL / GC: both finished (the same run here)");
        assert_eq!(table("fillrandom host writes").rows.len(), ROWS.len() - 1);
        assert_eq!(text(&table("YCSB").rows[0][2]), "failed");
        assert!(set.notes.iter().any(|n| n.contains("identical in the 6 rows that finished")), "{:?}", set.notes);
    }

    /// `--only` runs the parts asked for, and the report shows those parts alone: a YCSB workload
    /// on its own has its row in the YCSB table and no fillrandom table full of "failed".
    #[test]
    fn only_picks_the_fillrandom_rows_or_ycsb_workloads() {
        let c = |only: &[&str]| Context {
            scale: Scale::parse("tiny", &SCALES).unwrap(),
            store: Store::default(),
            only: Some(only.iter().map(|p| p.to_string()).collect()),
            timing: None,
            cpu: None,
        };
        let keys =
            |only: &[&str]| -> Vec<String> { ZnsLl.runs(&c(only)).unwrap().into_iter().map(|r| r.key).collect() };
        assert_eq!(keys(&["ycsb-a"]), ["ycsb a GC", "ycsb a LL"]);
        assert_eq!(keys(&["fillrandom"]).len(), ROWS.len());
        assert_eq!(keys(&["ycsb"]).len(), 2 * YcsbWorkload::ALL.len());
        assert_eq!(keys(&["fillrandom", "ycsb-f"]).len(), ROWS.len() + 2);
        let none = Runs { results: Default::default(), failed: Default::default() };
        assert_eq!(keys(&["fillrandom-LL", "fillrandom-GC"]), ["fillrandom GC", "fillrandom LL"]);
        let two = ZnsLl.report(&c(&["fillrandom-LL", "fillrandom-GC"]), &none).unwrap();
        let fill = two.tables.iter().find(|t| t.name.starts_with("fillrandom:")).expect("the fillrandom table");
        let rows: Vec<String> = fill.rows.iter().map(|r| format!("{:?}", r[0])).collect();
        assert_eq!(rows, [r#"Text("GC")"#, r#"Text("LL")"#], "the rows asked for, and no others");
        let set = ZnsLl.report(&c(&["ycsb-c", "ycsb-load"]), &none).unwrap();
        let names: Vec<&str> = set.tables.iter().map(|t| t.name.as_str()).collect();
        assert!(names.iter().all(|n| !n.starts_with("fillrandom") && *n != "beside the paper"), "{names:?}");
        let ycsb = set.tables.iter().find(|t| t.name.starts_with("YCSB")).expect("the YCSB table");
        let workloads: Vec<String> = ycsb.rows.iter().map(|r| format!("{:?}", r[0])).collect();
        assert_eq!(workloads, [r#"Text("load")"#, r#"Text("c")"#]);
        let all = ZnsLl.report(&Context { only: None, ..c(&[]) }, &none).unwrap();
        assert!(all.tables.iter().any(|t| t.name.starts_with("fillrandom:")));
    }

    /// Zone GC copying more than the engine wrote is named thrashing; less is not.
    #[test]
    fn host_gc_that_copies_more_than_the_engine_writes_is_named_thrashing() {
        let h = |total: u64, zone_gc: u64| HostWrites {
            total,
            wal: 0,
            flush: 0,
            compaction_by_level: Vec::new(),
            manifest: 0,
            fs_metadata: 0,
            other: 0,
            moves: 0,
            t_zone: 0,
            zone_gc,
        };
        let note = thrashing("Gear", &h(300 * GIB, 200 * GIB)).expect("200 GiB copied for 100 written");
        assert!(note.starts_with("Gear: host zone GC thrashes") && note.contains("2.0x"), "{note}");
        assert_eq!(thrashing("Gear", &h(300 * GIB, 100 * GIB)), None);
        assert_eq!(thrashing("LL", &h(10 * GIB, 0)), None);
    }
}
