//! Cost-age-times (Chiang, Lee and Chang, "Using data clustering to improve cleaning performance
//! for flash memory", 1999): collect the block with the least u / (1 - u) x 1 / age x erases,
//! so that cold, little-worn, mostly invalid blocks go first and wear spreads. `u` is the
//! block's share of valid pages, `age` the programs since it closed, `erases` its erase count
//! (plus one, so that a fresh block's cost is not zero whatever its utilisation).

use flashsim::{Candidate, VictimPolicy};

#[derive(Clone, Copy, Debug, Default)]
pub struct CostAgeTime;

impl VictimPolicy for CostAgeTime {
    fn name(&self) -> &str {
        "cost-age-time"
    }

    /// The highest score is collected: minus the cost.
    fn score(&self, c: &Candidate) -> f64 {
        let u = c.utilisation();
        -(u / (1.0 - u)) / c.age as f64 * (c.erase_count as f64 + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cold_worn_little_and_empty_blocks_order_as_the_paper_says() {
        let block =
            |valid_pages, age, erase_count| Candidate { block: 0, valid_pages, pages_per_block: 64, age, erase_count };
        let p = CostAgeTime;
        assert!(p.score(&block(0, 1, 9)) > p.score(&block(1, 1000, 0)), "an empty block first");
        assert!(p.score(&block(32, 1000, 0)) > p.score(&block(32, 10, 0)), "older first");
        assert!(p.score(&block(32, 100, 0)) > p.score(&block(32, 100, 5)), "less worn first");
        assert!(p.score(&block(16, 100, 0)) > p.score(&block(48, 100, 0)), "fewer valid pages first");
    }
}
