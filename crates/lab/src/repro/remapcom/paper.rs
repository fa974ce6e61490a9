//! The numbers seed 000 states, each with the figure or table it comes from (the text of its
//! section 5 where a figure gives only bars). Every comparison in the report reads them here.

/// Figure 9 (section 5.2): RemapCom's UDB ratio over RemapCom-Base's at 256 B .. 2 KiB (none at
/// 4 KiB).
pub const FIG9_FULL_OVER_BASE: [Option<f64>; 5] = [Some(1.11), Some(1.15), Some(1.18), Some(1.33), None];

/// Figure 10 (section 5.2): the average flash-write reductions (RemapCom-Base, RemapCom) over the
/// five KV sizes, fillrandom then zipfian.
pub const FIG10_AVERAGE_REDUCTION: [(f64, f64); 2] = [(0.224, 0.357), (0.20, 0.328)];

/// Table 3: SSD writes reduced per level L1-L4 at 1 KiB, fillrandom (RemapCom-Base, RemapCom).
pub const TABLE3_REDUCTION: [(f64, f64); 4] = [(0.01, 0.05), (0.26, 0.47), (0.29, 0.52), (0.32, 0.53)];

/// Figure 12 (section 5.3): throughput gain over LevelDB in %, by YCSB workload and mode, at 256
/// B, 1 KiB and 4 KiB.
pub const FIG12_GAIN: [(&str, &str, [Option<f64>; 3]); 6] = [
    ("load", "base", [Some(3.4), Some(3.9), Some(28.0)]),
    ("load", "full", [Some(9.7), Some(14.1), Some(28.0)]),
    ("a", "full", [Some(7.6), Some(12.0), Some(21.1)]),
    ("f", "full", [Some(7.1), Some(12.4), Some(13.8)]),
    ("c", "base", [Some(3.9), Some(5.9), Some(13.3)]),
    ("c", "full", [Some(-3.8), Some(-3.1), None]),
];

/// Figure 13: throughput normalized to LevelDB (RemapCom-Base, RemapCom) for Prefix(Dist),
/// AllRand, AllDist, PreRand.
pub const FIG13_THROUGHPUT: [(f64, f64); 4] = [(1.08, 1.28), (1.03, 1.10), (1.03, 1.07), (1.03, 1.07)];

/// Figure 15: RemapCom's throughput over LevelDB's, and LevelDB's WA over RemapCom's, for KV
/// sizes drawn from 100-1024, 1024-4096 and 4096-16384 bytes.
pub const FIG15_RANGES: [(f64, f64); 3] = [(1.06, 1.1), (1.11, 1.36), (1.17, 1.49)];

/// Figure 9 (section 5.2): "when the KV size exceeds 1 KB, the ratio is higher than 25% for
/// RemapCom-Base" (fillrandom).
pub const FIG9_BASE_ABOVE_1K: f64 = 0.25;

/// Figure 10 (section 5.2): zipfian's write amplification is 2.06x lower than fillrandom's on
/// average (LevelDB's, over the KV sizes).
pub const FIG10_ZIPFIAN_BELOW_FILLRANDOM: f64 = 2.06;

/// The abstract and section 1: RemapCom "can reduce write amplification by up to 53%" (Figure 10's
/// largest reduction is at 4 KiB, where the paper says RemapCom-Base and RemapCom are nearly the
/// same).
pub const WA_REDUCTION_UP_TO: f64 = 0.53;

/// Figure 11 (section 5.2): RemapCom-Base's throughput gain "by up to 30% with fillrandom and 25%
/// with zipfian", in %.
pub const FIG11_BASE_UP_TO: [f64; 2] = [30.0, 25.0];

/// Figure 11: the gains below 4 KiB, in %: RemapCom-Base "only 2.1-6%", RemapCom "5.4-16.2%".
pub const FIG11_BELOW_4K: [(f64, f64); 2] = [(2.1, 6.0), (5.4, 16.2)];

/// Figure 12 (section 5.3): RemapCom's average gain over the three KV sizes in %, for B, D and E.
pub const FIG12_AVERAGE_GAIN: [(&str, f64); 3] = [("b", 2.5), ("d", 3.2), ("e", 2.6)];

/// Figure 13 (section 5.3): the average write-amplification reduction (RemapCom-Base, RemapCom).
pub const FIG13_AVERAGE_REDUCTION: (f64, f64) = (0.045, 0.11);
