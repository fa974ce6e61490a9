//! `flashkv repro zns-ll`: seed 003's comparison of LSM compaction strategies on a ZNS SSD (BL, GC,
//! LS, Gear, LL, and beyond the seed leveled compaction with ZenFS's lifetime placement), on the
//! simulated ZNS SSD with ZoneFs, beside the paper's numbers.
//!
//! The runs are data: experiments/repro/zns-ll/fillrandom.toml (the seven rows) and ycsb.toml
//! (Load and A-F on GC and LL), at the scales they define, each value of ours where the seed is
//! silent commented there. This file picks the parts asked for and compares the runs with the
//! seed's numbers (report.rs: the tables and figures).

use workload::YcsbWorkload;

use crate::error::Result;
use crate::report::model::ResultSet;
use crate::result::RunResult;
use crate::spec::format_size;

use super::{Context, Repro, ReproFile, Runs, Scale};

mod claims;
mod report;
use report::{fillrandom, ycsb_table};

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The runs: fillrandom on every row, then each YCSB workload on GC and LL.
const FILES: [ReproFile; 2] = [repro_file!("zns-ll/fillrandom.toml"), repro_file!("zns-ll/ycsb.toml")];

/// The seed's numbers, each with the slide it comes from: LL's fillrandom speed-up over another
/// row ("Overall Performance (Fill-random Workload)": 1.4x vs LS, 1.8x vs Gear; "1.7x better
/// performance by avoiding zone GCs" for GC; Gear-28 is Gear on a larger device).
const PAPER_FILL_SPEEDUP: [(&str, f64); 4] = [("LS", 1.4), ("Gear", 1.8), ("Gear-28", 1.8), ("GC", 1.7)];
/// "Performance (YCSB Workload)": LL's speed-up over GC, 1.22x to 1.65x.
const PAPER_YCSB_SPEEDUP: (f64, f64) = (1.22, 1.65);
/// The seed's workload: 27 GB of fillrandom with 16-byte keys and 512-byte values (the files'
/// records: 27e9 / 528).
const PAPER_DATA: u64 = 27_000_000_000;

/// One compared configuration (its run is fillrandom.toml's variant of the same name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub name: &'static str,
    /// What the row stands for.
    pub about: &'static str,
}

/// Seed 003's five rows, our sixth, and Gear again on a larger device, in the file's order.
pub const ROWS: [Row; 7] = [
    Row { name: "BL", about: "LevelDB; zones reused only when fully invalid (no GC)" },
    Row { name: "GC", about: "LevelDB + greedy host zone GC" },
    Row { name: "LS", about: "GC + zones dedicated per level" },
    Row {
        name: "Gear",
        about: "GearDB's gear compaction, compaction windows of a level's oldest zones, zones per level, GC",
    },
    Row { name: "LL", about: "lifetime-leveling: zones per level, compaction pointers, T-zone, GC" },
    Row { name: "ZenFS", about: "beyond the seed: leveled compaction with ZenFS's lifetime-hint placement, GC" },
    Row { name: "Gear-28", about: "Gear on a 28 GiB device (before issue 28 Gear needed the room)" },
];

/// The key of row `row`'s fillrandom run, and of YCSB workload `w` on `row`.
fn fill_key(row: &str) -> String {
    format!("fillrandom {row}")
}

fn ycsb_key(w: YcsbWorkload, row: &str) -> String {
    format!("ycsb {} {row}", w.name())
}

/// The scale's sizes, as its runs have them.
fn describe(scale: &Scale) -> Result<String> {
    let spec = |row: &str| FILES[0].spec(&scale.name, &fill_key(row));
    let (gc, bl, gear) = (spec("GC")?, spec("BL")?, spec("Gear-28")?);
    let s = |b: Option<crate::spec::Bytes>| format_size(b.map_or(0, |b| b.0));
    // The device keeps whole zones (a scale's multiplied capacity has a fraction of one).
    let zone = gc.device.zone_size.map_or(1, |z| z.0.max(1));
    let device = |spec: &crate::spec::RunSpec| format_size(spec.device.capacity.map_or(0, |c| c.0 / zone * zone));
    Ok(format!(
        "{} scale: {} of fillrandom (16 B keys, 512 B values) on a {} ZNS SSD (BL: {}, Gear-28: {}), {} zones \
         of {} erase blocks, {} SSTs, {} write buffer, {} level 1",
        scale.name,
        format_size(scale.size(PAPER_DATA) / MIB * MIB),
        device(&gc),
        device(&bl),
        device(&gear),
        s(gc.device.zone_size),
        s(gc.device.block_size),
        s(gc.engine.lsm.max_file_size),
        s(gc.engine.lsm.write_buffer_size),
        s(gc.engine.lsm.max_bytes_for_level_base)
    ))
}

/// Seed 003's comparison, as a repro.
pub struct ZnsLl;

impl Repro for ZnsLl {
    fn title(&self) -> &'static str {
        "Lifetime-leveling compaction on a ZNS SSD (seed 003): BL, GC, LS, Gear, LL and ZenFS placement"
    }

    fn name(&self) -> &'static str {
        "zns-ll"
    }

    fn files(&self) -> &'static [ReproFile] {
        &FILES
    }

    fn parts(&self) -> std::result::Result<&'static [&'static str], &'static str> {
        Ok(&PARTS)
    }

    /// The fillrandom rows or one of them, every YCSB workload or one of them (on GC and LL).
    fn wanted(&self, c: &Context, _file: &ReproFile, key: &str) -> bool {
        match key.strip_prefix("ycsb ") {
            Some(rest) => c.wants("ycsb") || c.wants(&format!("ycsb-{}", rest.split(' ').next().unwrap_or(rest))),
            None => c.wants("fillrandom") || c.wants(&format!("fillrandom-{}", key.trim_start_matches("fillrandom "))),
        }
    }

    /// The tables and figures of the parts asked for: a part left out is absent, not "failed".
    fn report(&self, c: &Context, runs: &Runs) -> Result<ResultSet> {
        let fills: Vec<Option<RunResult>> = ROWS.iter().map(|r| runs.get(&fill_key(r.name)).cloned()).collect();
        let mut set = ResultSet { scale: describe(&c.scale)?, notes: notes(), ..Default::default() };
        let asked: Vec<bool> = ROWS.iter().map(|r| self.wanted(c, &FILES[0], &fill_key(r.name))).collect();
        if asked.contains(&true) {
            fillrandom(&mut set, &fills, &asked);
        }
        // The YCSB table's runs come in (GC, LL) pairs, one pair per workload asked for.
        let workloads: Vec<YcsbWorkload> =
            YcsbWorkload::ALL.into_iter().filter(|w| self.wanted(c, &FILES[1], &ycsb_key(*w, "GC"))).collect();
        let pairs: Vec<Option<RunResult>> =
            workloads.iter().flat_map(|w| ["GC", "LL"].map(|row| runs.get(&ycsb_key(*w, row)).cloned())).collect();
        if !workloads.is_empty() {
            ycsb_table(&mut set, &workloads, &pairs);
        }
        let claims = claims::claims(&fills, asked.contains(&true), &workloads, &pairs);
        let (table, note) = super::claims::table(&c.scale.name, &claims);
        set.tables.insert(0, table);
        set.notes.push(note);
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

fn notes() -> Vec<String> {
    [
        "Throughput is operations per simulated second (the fillrandom phase, background work included).",
        crate::result::SIMULATED_TIME_NOTE,
        "The host's page cache is the seed's \"1.5GB memory cache\" (1.5 GiB at the paper's scale, scaled with the \
         rest): CLOCK, Linux's readahead (128 KiB) and dirty write-back (10 % background ratio, 30 s expiry). The \
         ZenFS row bypasses it: ZenFS opens its files for direct I/O (the engine's direct_reads and direct_writes).",
        "Our choices where the seed is silent: the fillrandom rows' device by our size rule (issue 57), capacity = \
         0.95 x L x SA_LS (L the live bytes at the end, SA_LS the LS row's space amplification without zone GC), so \
         that the GC and LS rows must collect zones, as the seed's \"GC & LS degrade when GC enabled\" says they \
         did, and LL need not: 20.3 GiB (325 zones) at the paper's scale, 1,388 MiB at 1/16, 424 MiB at the tiny \
         (test) scale, each from that scale's own L and SA_LS (crates/lab/experiments/zns-ll-device-size.toml); BL, \
         which has no GC and must never fill, twice the paper's 24 GiB; YCSB's device 24 GiB at the paper's scale \
         (1.5 times the live data; its GC row collects there). The femu preset's NAND timings, 14 open and active \
         zones (a WD ZN540's limits), host GC when 8 empty zones are left (the reference notes say 1, which leaves \
         no zone for the other placement classes while GC works), greedy victim (least live data, among full zones \
         and partly written zones no file writes any more), 12 MiB write buffer (the authors' fork), YCSB with 512 \
         B values, as many records as fillrandom leaves live and a quarter as many operations. The tiny scale gives \
         YCSB's devices 1.5 times more room.",
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
        let mut spec = FILES[0].spec("tiny", "fillrandom LL").unwrap();
        (spec.workload.records, spec.device.store) = (Some(2_000), crate::spec::Store::Memory);
        let (r, _) = crate::runner::run(&spec, false).unwrap();
        let mut fills: Vec<Option<RunResult>> = vec![Some(r.clone()); ROWS.len()];
        fills[2] = None; // LS
        let mut set = ResultSet::default();
        fillrandom(&mut set, &fills, &[true; ROWS.len()]);
        ycsb_table(&mut set, &[YcsbWorkload::A], &[Some(r.clone()), None]);
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
        let claims = claims::claims(&fills, true, &[YcsbWorkload::A], &[Some(r.clone()), None]);
        let (paper, _) = super::super::claims::table("tiny", &claims);
        assert_eq!(text(&paper.rows[0][3]), "failed", "LL / LS needs LS");
        assert_eq!(text(&paper.rows[3][3]), "1", "LL / GC: both finished (the same run here)");
        assert_eq!(text(&paper.rows.last().unwrap()[3]), "failed", "YCSB A needs GC's run");
        assert_eq!(table("fillrandom host writes").rows.len(), ROWS.len() - 1);
        assert_eq!(text(&table("YCSB").rows[0][2]), "failed");
        assert!(set.notes.iter().any(|n| n.contains("identical in the 6 rows that finished")), "{:?}", set.notes);
    }

    /// `--only` runs the parts asked for, and the report shows those parts alone: a YCSB workload
    /// on its own has its row in the YCSB table and no fillrandom table full of "failed".
    #[test]
    fn only_picks_the_fillrandom_rows_or_ycsb_workloads() {
        let c = |only: &[&str]| Context {
            scale: Scale::parse("tiny", &crate::repro::scales(&ZnsLl).unwrap()).unwrap(),
            store: crate::spec::Store::default(),
            only: Some(only.iter().map(|p| p.to_string()).collect()),
            timing: None,
            cpu: None,
        };
        let keys = |only: &[&str]| -> Vec<String> {
            crate::repro::runs(&ZnsLl, &c(only)).unwrap().into_iter().map(|r| r.key).collect()
        };
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
        assert!(names.iter().all(|n| !n.starts_with("fillrandom")), "{names:?}");
        let claims = set.tables.iter().find(|t| t.name == "claims (tiny)").expect("the claims table");
        let what: Vec<String> = claims.rows.iter().map(|r| format!("{:?}", r[1])).collect();
        assert_eq!(what, [r#"Text("LL / GC, YCSB load")"#, r#"Text("LL / GC, YCSB c")"#], "the YCSB claims alone");
        let ycsb = set.tables.iter().find(|t| t.name.starts_with("YCSB")).expect("the YCSB table");
        let workloads: Vec<String> = ycsb.rows.iter().map(|r| format!("{:?}", r[0])).collect();
        assert_eq!(workloads, [r#"Text("load")"#, r#"Text("c")"#]);
        let all = ZnsLl.report(&Context { only: None, ..c(&[]) }, &none).unwrap();
        assert!(all.tables.iter().any(|t| t.name.starts_with("fillrandom:")));
    }

    /// The rows the report names are the fillrandom file's variants, in its order, and the file's
    /// records are the seed's 27 GB.
    #[test]
    fn the_reports_rows_are_the_files() {
        let fills = FILES[0].at("paper").unwrap().runs();
        let keys: Vec<String> = fills.iter().map(|r| r.0.clone()).collect();
        assert_eq!(keys, ROWS.map(|r| fill_key(r.name)));
        assert!(fills.iter().all(|r| r.1.workload.records == Some(PAPER_DATA / (16 + 512))));
        let small = Scale::parse("small", &crate::repro::scales(&ZnsLl).unwrap()).unwrap();
        assert_eq!(
            describe(&small).unwrap(),
            "small scale: 1609 MiB of fillrandom (16 B keys, 512 B values) on a 1388 MiB ZNS SSD (BL: 3276 MiB, \
             Gear-28: 1912 MiB), 4 MiB zones of 64 KiB erase blocks, 256 KiB SSTs, 768 KiB write buffer, 640 KiB \
             level 1"
        );
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
