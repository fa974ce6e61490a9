//! The order of a run phase's operations (`workload.order`): as the generator draws them, or its
//! puts first, then its gets. Seed 004's workload "contains five hundred thousands of put
//! operations and five hundred thousands of get operations" from YCSB, in an order it does not
//! give: YCSB A's mix interleaves them; a load of the puts, then a run of the gets, is the other
//! reading.

use workload::YcsbConfig;

use super::named::{NameError, Named};

/// The order of a run phase's operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunOrder {
    /// As the generator draws them (YCSB A: reads and updates interleaved, half each on average).
    #[default]
    Mixed,
    /// The mix's updates first, then its reads (YCSB workloads of reads and updates only): each
    /// its share of the operations, each key drawn by the workload's request distribution.
    PutsThenGets,
}

impl Named for RunOrder {
    fn parse_name(text: &str) -> Result<RunOrder, NameError> {
        match text.trim() {
            "mixed" => Ok(RunOrder::Mixed),
            "puts-then-gets" => Ok(RunOrder::PutsThenGets),
            t => Err(format!("unknown order '{t}'; accepted: mixed, puts-then-gets").into()),
        }
    }
    fn name(&self) -> String {
        match self {
            RunOrder::Mixed => "mixed",
            RunOrder::PutsThenGets => "puts-then-gets",
        }
        .into()
    }
}

impl RunOrder {
    pub fn is_mixed(&self) -> bool {
        *self == RunOrder::Mixed
    }

    /// The run phase of YCSB configuration `c` as the phases to run, each with its name's
    /// suffix, configuration and operations: itself when mixed; else its updates (the
    /// operations times the update share, rounded), then its reads (the rest). An error says why
    /// a mix does not split (it has inserts, scans or read-modify-writes).
    pub fn split(self, c: &YcsbConfig) -> Result<Vec<(&'static str, YcsbConfig, u64)>, String> {
        if self.is_mixed() {
            return Ok(vec![("", c.clone(), c.operation_count)]);
        }
        let p = c.proportions;
        if p.insert > 0.0 || p.scan > 0.0 || p.read_modify_write > 0.0 {
            return Err(format!(
                "puts-then-gets splits a mix of reads and updates; this one has inserts {}, scans {}, \
                 read-modify-writes {}",
                p.insert, p.scan, p.read_modify_write
            ));
        }
        let n = c.operation_count;
        let puts = (n as f64 * p.update / (p.read + p.update)).round() as u64;
        let phase = |read: f64, update: f64, ops: u64| {
            let mut c = c.clone();
            (c.proportions.read, c.proportions.update, c.operation_count) = (read, update, ops);
            c
        };
        Ok([(" (puts)", phase(0.0, 1.0, puts), puts), (" (gets)", phase(1.0, 0.0, n - puts), n - puts)]
            .into_iter()
            .filter(|x| x.2 > 0)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use workload::YcsbWorkload;

    use super::*;

    #[test]
    fn ycsb_a_splits_into_its_puts_then_its_gets() {
        let a = YcsbConfig::core(YcsbWorkload::A, 1000, 62_500);
        let split = RunOrder::PutsThenGets.split(&a).unwrap();
        let parts: Vec<(&str, f64, f64, u64)> =
            split.iter().map(|(n, c, ops)| (*n, c.proportions.read, c.proportions.update, *ops)).collect();
        assert_eq!(parts, vec![(" (puts)", 0.0, 1.0, 31_250), (" (gets)", 1.0, 0.0, 31_250)]);
        assert!(split
            .iter()
            .all(|(_, c, ops)| c.operation_count == *ops && c.request_distribution == a.request_distribution));
        assert_eq!(RunOrder::Mixed.split(&a).unwrap().len(), 1);
        let e = RunOrder::PutsThenGets.split(&YcsbConfig::core(YcsbWorkload::F, 10, 10)).unwrap_err();
        assert!(e.contains("read-modify-writes 0.5"), "{e}");
        for o in [RunOrder::Mixed, RunOrder::PutsThenGets] {
            assert_eq!(RunOrder::parse_name(&o.name()).unwrap(), o);
        }
        assert!(RunOrder::parse_name("gets-first").unwrap_err().0.contains("accepted: mixed, puts-then-gets"));
    }
}
