//! Seed 000's claims beside ours (see `repro::claims` for the rule): every number its section 5
//! states for Figures 9-15 and Table 3 (paper.rs), for the parts asked for; a part not asked for
//! has no claims. Ours are the headline runs (block-filling KV sizes); the literal rows are not
//! claims. A run that failed leaves its claims "failed".
//!
//! A cause is attached only where docs/results/remapcom.md reports a test that switched it off in
//! an experiment file the cause names, and only to a claim that misses in the direction the test
//! explains (a cause of an overshoot never explains a shortfall).

use workload::mixgraph::MixgraphKind;

use super::super::claims::{Claim, Stated};
use super::micro::READINGS;
use super::sizes::{dataset_label, datasets};
use super::{key, paper, reduction, wa, Mode, KV_SIZES, MIB};
use crate::repro::{Context, Runs};
use crate::result::RunResult;

/// Tested for RemapCom's Figure 11 shortfall (docs/results/remapcom.md, Figure 11).
const GC: &str = "in part GC: UDB retention keeps remapped pages alive beside pages that die with their SSTs, and GC \
     copies them; a device with almost twice the blocks on the same dies cut GC copies by 90 % and narrowed \
     RemapCom's gap to Baseline at 1 KiB from -22.7 % to -10.8 % at 1/16 \
     (crates/lab/experiments/remapcom-fig11-explained.toml); the rest not explained";

/// Tested for the throughput gains above the paper's at 1 KiB in Figure 11 and YCSB Load (the
/// page-cache sweep, docs/results/remapcom.md).
const CACHE: &str = "in part our page cache (12 GiB, 768 MiB at 1/16; the seed gives none): with it every compaction \
     read hits the cache, so that compaction time is the writes and CPU remapping cuts; with less cache every Figure 11 \
     and YCSB Load gain at 1 KiB falls (RemapCom-Base's fillrandom gain: +52.9 % with 12 GiB, +19.6 % with 1 GiB, \
     +5.3 % without a cache at the paper's scale; +16.5 / +11.6 / +0.7 % with 768 / 64 MiB / none at 1/16) \
     (crates/lab/experiments/repro/remapcom/cache.toml, the report's page-cache sweep)";

/// Tested for Figure 15's throughput ratios above the paper's.
const CACHE_FIG15: &str = "in part our page cache (12 GiB, 768 MiB at 1/16; the seed gives none): without one, \
     RemapCom's throughput over Baseline's falls from 1.32 / 2.35 / 2.78x to 0.88 / 1.14 / 1.61x over the three \
     ranges at the paper's scale (from 0.85 / 1.29 / 1.64x to 0.70 / 0.96 / 1.27x at 1/16) \
     (crates/lab/experiments/remapcom-fig15-cache.toml)";

/// Tested for YCSB A's overshoot (docs/results/remapcom.md, Figure 12).
const SEEK_A: &str = "LevelDB's seek compaction (gets set compactions off, which remapping makes cheap): with it off, \
     RemapCom's gain in A at 1 KiB fell from +55.6 % to +9.0 % at the paper's scale \
     (crates/lab/experiments/remapcom-ycsb-a-seek.toml)";

/// Tested for YCSB E's loss (docs/results/remapcom.md, Figure 12).
const ALIGNED_E: &str = "block alignment: an aligned block holds fewer KVs per block a scan reads; aligning \
     Baseline's blocks alone gives RemapCom-Base's whole loss in E at 1 and 4 KiB at 1/16, RemapCom's further loss \
     at 1 KiB not tested on its own (crates/lab/experiments/remapcom-ycsb-e-aligned.toml)";

/// Tested for Mixgraph's WA reductions and RemapCom-Base's throughput above the paper's.
const SEEK_MIXGRAPH: &str = "LevelDB's seek compaction (gets alone compact tables no write touched): with it off, \
     the average WA reductions are 3.8 / 11.4 % and RemapCom-Base runs at 0.97-1.04x Baseline at 1/16 \
     (crates/lab/experiments/remapcom-mixgraph-no-seek.toml)";

/// The claims of the parts asked for, and a note for each claim left out (a level of Table 3 the
/// scale barely reaches).
pub(super) fn claims(c: &Context, runs: &Runs) -> (Vec<Claim>, Vec<String>) {
    let mut claims = Vec::new();
    let mut left_out = Vec::new();
    if c.wants("fig9-11") {
        micro(runs, &mut claims);
    }
    if c.wants("table3") {
        table3(runs, &mut claims, &mut left_out);
    }
    if c.wants("fig12") {
        ycsb(runs, &mut claims);
    }
    if c.wants("fig13") {
        mixgraph(runs, &mut claims);
    }
    if c.wants("fig14") {
        dataset(c, runs, &mut claims);
    }
    if c.wants("fig15") {
        ranges(runs, &mut claims);
    }
    (claims, left_out)
}

/// Ours against the paper: a miss or a near miss on the side `above` (ours above the paper's
/// when true) takes the tested `cause`.
fn caused(claim: Claim, above: bool, cause: &'static str) -> Claim {
    use super::super::claims::Verdict;
    let side = match (claim.ours, claim.paper) {
        (Some(x), Stated::Value(p)) => Some(x > p),
        (Some(x), Stated::Range(a, b)) => Some(x > a.max(b)),
        _ => None,
    };
    if claim.verdict() != Verdict::Matches && claim.verdict() != Verdict::Failed && side == Some(above) {
        claim.cause(cause)
    } else {
        claim
    }
}

/// Throughput gain of `r` over `base` in %.
fn gain(r: &RunResult, base: &RunResult) -> f64 {
    (r.host.ops_per_sec / base.host.ops_per_sec.max(1e-9) - 1.0) * 100.0
}

fn udb(r: &RunResult) -> f64 {
    r.lsm.as_ref().map_or(0.0, |s| s.udb_ratio_inputs)
}

/// Figures 9, 10 and 11 (fig9-11.toml's headline runs).
fn micro(runs: &Runs, claims: &mut Vec<Claim>) {
    let run = |d: usize, kv: u64, m: Mode| runs.get(&key(&READINGS[d].label(kv), m));
    let both = |d: usize, kv: u64, a: Mode, b: Mode| run(d, kv, a).zip(run(d, kv, b));
    for (i, kv) in KV_SIZES.iter().enumerate() {
        let Some(p) = paper::FIG9_FULL_OVER_BASE[i] else { continue };
        let ours = both(0, *kv, Mode::Full, Mode::Base).map(|(f, b)| udb(f) / udb(b).max(1e-9));
        claims.push(Claim::new(
            "Fig. 9",
            format!("UDB ratio RemapCom / RemapCom-Base, fillrandom {kv} B"),
            Stated::Value(p),
            ours,
        ));
    }
    for kv in [2048, 4096] {
        let ours = run(0, kv, Mode::Base).map(|r| udb(r) * 100.0);
        claims.push(
            Claim::new(
                "Fig. 9",
                format!("RemapCom-Base UDB ratio %, fillrandom {kv} B"),
                Stated::AtLeast(paper::FIG9_BASE_ABOVE_1K * 100.0),
                ours,
            )
            .words("\"higher than 25%\" above 1 KB"),
        );
    }
    // Figure 10: each distribution's average reductions over the five sizes.
    let reductions = |d: usize, m: Mode| -> Option<Vec<f64>> {
        KV_SIZES.iter().map(|kv| both(d, *kv, Mode::Baseline, m).map(|(b, x)| reduction(wa(b), wa(x)))).collect()
    };
    let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
    for (d, dist) in ["fillrandom", "zipfian"].iter().enumerate() {
        let (pb, pf) = paper::FIG10_AVERAGE_REDUCTION[d];
        for (m, p) in [(Mode::Base, pb), (Mode::Full, pf)] {
            let ours = reductions(d, m).map(|v| mean(v) * 100.0);
            claims.push(Claim::new(
                "Fig. 10",
                format!("{} average WA reduction %, {dist}", m.name()),
                Stated::Value(p * 100.0),
                ours,
            ));
        }
    }
    let up_to = reductions(0, Mode::Full).map(|v| v.into_iter().fold(f64::MIN, f64::max) * 100.0);
    claims.push(
        Claim::new(
            "Fig. 10",
            "RemapCom's largest WA reduction over the KV sizes %, fillrandom",
            Stated::Value(paper::WA_REDUCTION_UP_TO * 100.0),
            up_to,
        )
        .words("\"up to 53%\" (abstract)"),
    );
    let zipf: Option<Vec<f64>> = KV_SIZES
        .iter()
        .map(|kv| run(0, *kv, Mode::Baseline).zip(run(1, *kv, Mode::Baseline)))
        .map(|p| p.map(|(f, z)| wa(f) / wa(z).max(1e-9)))
        .collect();
    claims.push(Claim::new(
        "Fig. 10",
        "Baseline WA fillrandom / zipfian, average over the KV sizes",
        Stated::Value(paper::FIG10_ZIPFIAN_BELOW_FILLRANDOM),
        zipf.map(mean),
    ));
    for (d, dist) in ["fillrandom", "zipfian"].iter().enumerate() {
        let ours = both(d, 4096, Mode::Full, Mode::Base).map(|(f, b)| wa(f) / wa(b).max(1e-9));
        claims.push(
            Claim::new("Fig. 10", format!("WA RemapCom / RemapCom-Base, {dist} 4096 B"), Stated::Value(1.0), ours)
                .words("\"nearly the same\""),
        );
    }
    // Figure 11.
    for (d, dist) in ["fillrandom", "zipfian"].iter().enumerate() {
        let gains: Option<Vec<f64>> =
            KV_SIZES.iter().map(|kv| both(d, *kv, Mode::Base, Mode::Baseline).map(|(x, b)| gain(x, b))).collect();
        claims.push(
            Claim::new(
                "Fig. 11",
                format!("RemapCom-Base's largest throughput gain %, {dist}"),
                Stated::Value(paper::FIG11_BASE_UP_TO[d]),
                gains.map(|g| g.into_iter().fold(f64::MIN, f64::max)),
            )
            .words("up to"),
        );
        for kv in KV_SIZES.iter().filter(|kv| **kv < 4096) {
            for (m, (lo, hi)) in [(Mode::Base, paper::FIG11_BELOW_4K[0]), (Mode::Full, paper::FIG11_BELOW_4K[1])] {
                let ours = both(d, *kv, m, Mode::Baseline).map(|(x, b)| gain(x, b));
                let claim = Claim::new(
                    "Fig. 11",
                    format!("{} throughput gain %, {dist} {kv} B", m.name()),
                    Stated::Range(lo, hi),
                    ours,
                )
                .words("below 4 KB");
                // The GC test ran fillrandom at 1 KiB only, the page-cache sweep both distributions
                // at 1 KiB: other shortfalls and overshoots stay "not explained".
                let claim = if *kv == 1024 { caused(claim, true, CACHE) } else { claim };
                let gc_tested = m == Mode::Full && d == 0 && *kv == 1024;
                claims.push(if gc_tested { caused(claim, false, GC) } else { claim });
            }
        }
    }
}

/// Table 3: per-level reduction of SSD writes, fillrandom at 1 KiB, with the report's rule for a
/// level the scale barely reaches (under 1 MiB or 5 % of the busiest level's Baseline writes).
fn table3(runs: &Runs, claims: &mut Vec<Claim>, left_out: &mut Vec<String>) {
    let label = READINGS[0].label(1024);
    let level_host = |m: Mode, level: usize| -> Option<f64> {
        let r = runs.get(&key(&label, m))?;
        Some(r.levels().iter().find(|l| l.level == level).and_then(|l| l.host_write_bytes).unwrap_or(0) as f64)
    };
    let busiest = (1..=paper::TABLE3_REDUCTION.len()).filter_map(|l| level_host(Mode::Baseline, l)).fold(0.0, f64::max);
    for (i, (pb, pf)) in paper::TABLE3_REDUCTION.iter().enumerate() {
        let level = i + 1;
        let base = level_host(Mode::Baseline, level);
        if let Some(b) = base.filter(|b| *b < MIB as f64 || *b < 0.05 * busiest) {
            left_out.push(format!(
                "Claims: Table 3's L{level} is left out: Baseline writes {:.1} MiB there at this scale (under 1 MiB or \
                 5 % of the busiest level's).",
                b / MIB as f64
            ));
            continue;
        }
        for (m, p) in [(Mode::Base, pb), (Mode::Full, pf)] {
            let ours = base.zip(level_host(m, level)).map(|(b, x)| reduction(b, x) * 100.0);
            claims.push(Claim::new(
                "Table 3",
                format!("{} SSD writes reduced at L{level} %, fillrandom 1024 B", m.name()),
                Stated::Value(p * 100.0),
                ours,
            ));
        }
    }
}

/// Figure 12: YCSB gains per workload and size, and the averages over sizes for B, D and E.
fn ycsb(runs: &Runs, claims: &mut Vec<Claim>) {
    const SIZES: [u64; 3] = [256, 1024, 4096];
    let ycsb_gain = |w: &str, kv: u64, m: Mode| {
        let label = format!("ycsb {w} {kv} B");
        runs.get(&key(&label, m)).zip(runs.get(&key(&label, Mode::Baseline))).map(|(x, b)| gain(x, b))
    };
    for (w, mode, values) in paper::FIG12_GAIN {
        let m = if mode == "base" { Mode::Base } else { Mode::Full };
        for (kv, p) in SIZES.iter().zip(values) {
            let Some(p) = p else { continue };
            let claim = Claim::new(
                "Fig. 12",
                format!("{} throughput gain %, YCSB {w} {kv} B", m.name()),
                Stated::Value(p),
                ycsb_gain(w, *kv, m),
            );
            // The seek-compaction test ran A at 1 KiB only; the page-cache sweep moves Load's gains at
            // 1 KiB one way, the other workloads' both ways.
            claims.push(match (w, *kv) {
                ("a", 1024) => caused(claim, true, SEEK_A),
                ("load", 1024) => caused(claim, true, CACHE),
                _ => claim,
            });
        }
    }
    for (w, p) in paper::FIG12_AVERAGE_GAIN {
        let gains: Option<Vec<f64>> = SIZES.iter().map(|kv| ycsb_gain(w, *kv, Mode::Full)).collect();
        let ours = gains.map(|g| g.iter().sum::<f64>() / g.len() as f64);
        let claim = Claim::new(
            "Fig. 12",
            format!("RemapCom throughput gain %, YCSB {w}, average over 256 B, 1 KiB, 4 KiB"),
            Stated::Value(p),
            ours,
        );
        claims.push(if w == "e" { caused(claim, false, ALIGNED_E) } else { claim });
    }
}

/// Figure 13: normalized throughput per Mixgraph workload and the average WA reductions.
fn mixgraph(runs: &Runs, claims: &mut Vec<Claim>) {
    const KINDS: [MixgraphKind; 4] =
        [MixgraphKind::PrefixDist, MixgraphKind::AllRandom, MixgraphKind::AllDist, MixgraphKind::PrefixRandom];
    let run = |k: MixgraphKind, m: Mode| runs.get(&key(&format!("mixgraph {}", k.name()), m));
    let mut reds: [Option<Vec<f64>>; 2] = [Some(Vec::new()), Some(Vec::new())];
    for (i, k) in KINDS.iter().enumerate() {
        let (pb, pf) = paper::FIG13_THROUGHPUT[i];
        for (j, (m, p)) in [(Mode::Base, pb), (Mode::Full, pf)].into_iter().enumerate() {
            let pair = run(*k, m).zip(run(*k, Mode::Baseline));
            let ours = pair.map(|(x, b)| x.host.ops_per_sec / b.host.ops_per_sec.max(1e-9));
            let claim = Claim::new(
                "Fig. 13",
                format!("{} throughput / Baseline's, Mixgraph {}", m.name(), k.name()),
                Stated::Value(p),
                ours,
            );
            claims.push(if m == Mode::Base { caused(claim, true, SEEK_MIXGRAPH) } else { claim });
            let red = pair.map(|(x, b)| reduction(wa(b), wa(x)));
            reds[j] = reds[j].take().zip(red).map(|(mut v, r)| {
                v.push(r);
                v
            });
        }
    }
    let (pb, pf) = paper::FIG13_AVERAGE_REDUCTION;
    for (j, (m, p)) in [(Mode::Base, pb), (Mode::Full, pf)].into_iter().enumerate() {
        let ours = reds[j].as_ref().map(|v| v.iter().sum::<f64>() / v.len() as f64 * 100.0);
        let claim = Claim::new(
            "Fig. 13",
            format!("{} average WA reduction %, Mixgraph", m.name()),
            Stated::Value(p * 100.0),
            ours,
        );
        claims.push(caused(claim, true, SEEK_MIXGRAPH));
    }
}

/// Figure 14 states no numbers: LevelDB's WA grows with the dataset, RemapCom-Base's and
/// RemapCom's only slightly. Our reading: Baseline's WA at 12 GiB over its WA at 2 GiB is at least
/// 1, and each remapping mode's growth over that span at most Baseline's. The 12 GiB runs must
/// finish for any of them to read other than "failed".
fn dataset(c: &Context, runs: &Runs, claims: &mut Vec<Claim>) {
    let sizes = datasets(c);
    let (first, last) = (sizes[0], sizes[sizes.len() - 1]);
    let growth = |m: Mode| {
        let at = |d: u64| runs.get(&key(&dataset_label(d, ""), m)).map(wa);
        at(last).zip(at(first)).map(|(l, f)| l / f.max(1e-9))
    };
    let base = growth(Mode::Baseline);
    claims.push(
        Claim::new("Fig. 14", "Baseline WA at 12 GiB / at 2 GiB (the paper's sizes)", Stated::AtLeast(1.0), base)
            .words("\"becomes more serious\""),
    );
    for m in [Mode::Base, Mode::Full] {
        let ours = growth(m).zip(base).map(|(g, b)| g / b.max(1e-9));
        claims.push(
            Claim::new(
                "Fig. 14",
                format!("{}'s WA growth 2 to 12 GiB / Baseline's", m.name()),
                Stated::AtMost(1.0),
                ours,
            )
            .words("\"slightly affected\" (our reading: grows less than Baseline's)"),
        );
    }
}

/// Figure 15: throughput and WA ratios for the three ranges.
fn ranges(runs: &Runs, claims: &mut Vec<Claim>) {
    for ((lo, hi), (ops, wa_ratio)) in super::sizes::RANGES.iter().zip(paper::FIG15_RANGES) {
        let label = format!("range {lo}-{hi} B");
        let pair = runs.get(&key(&label, Mode::Full)).zip(runs.get(&key(&label, Mode::Baseline)));
        let claim = Claim::new(
            "Fig. 15",
            format!("RemapCom throughput / Baseline's, {lo}-{hi} B"),
            Stated::Value(ops),
            pair.map(|(f, b)| f.host.ops_per_sec / b.host.ops_per_sec.max(1e-9)),
        );
        claims.push(caused(claim, true, CACHE_FIG15));
        claims.push(Claim::new(
            "Fig. 15",
            format!("Baseline WA / RemapCom's, {lo}-{hi} B"),
            Stated::Value(wa_ratio),
            pair.map(|(f, b)| wa(b) / wa(f).max(1e-9)),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repro::Scale;

    fn context(only: Option<&[&str]>) -> Context {
        Context {
            scale: Scale::parse("tiny", &crate::repro::scales(&super::super::RemapCom).unwrap()).unwrap(),
            store: crate::spec::Store::default(),
            only: only.map(|o| o.iter().map(|p| p.to_string()).collect()),
            timing: None,
            cpu: None,
        }
    }

    /// Every part has its claims, and only the parts asked for; with no run finished every claim
    /// reads "failed" (none is dropped), and every cause names an experiment file that exists.
    #[test]
    fn every_part_has_claims_and_causes_name_files() {
        let none = Runs { results: Default::default(), failed: Default::default() };
        let (all, _) = claims(&context(None), &none);
        for source in ["Fig. 9", "Fig. 10", "Fig. 11", "Table 3", "Fig. 12", "Fig. 13", "Fig. 14", "Fig. 15"] {
            assert!(all.iter().any(|c| c.source == source), "no claim from {source}");
        }
        assert!(all.iter().all(|c| c.ours.is_none()), "no run, no number");
        assert_eq!(all.iter().filter(|c| c.source == "Table 3").count(), 8, "every level when none is known");
        let (fig15, _) = claims(&context(Some(&["fig15"])), &none);
        assert!(fig15.iter().all(|c| c.source == "Fig. 15") && fig15.len() == 6, "{fig15:?}");
        let (cache, _) = claims(&context(Some(&["cache"])), &none);
        assert!(cache.is_empty(), "the cache sweep is ours: no claim");

        // Every cause the claims can take names a file that exists.
        let with = |cause| Claim::new("Fig. 0", "x", Stated::Value(1.0), Some(2.0)).cause(cause);
        let every = [GC, SEEK_A, ALIGNED_E, SEEK_MIXGRAPH].map(with);
        crate::repro::claims::causes_name_files(&every).unwrap();
        // A cause explains a miss on its own side only.
        let short = Claim::new("Fig. 11", "x", Stated::Range(5.4, 16.2), Some(-20.0));
        assert_eq!(caused(short.clone(), false, GC).cause, Some(GC));
        assert_eq!(caused(short, true, GC).cause, None);
        let fine = Claim::new("Fig. 11", "x", Stated::Range(5.4, 16.2), Some(10.0));
        assert_eq!(caused(fine, false, GC).cause, None);
    }
}
