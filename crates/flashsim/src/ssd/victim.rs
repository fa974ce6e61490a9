//! GC victim policies that score blocks: the extension point for a researcher's own policy.
//!
//! Contract: when a plane needs a victim, every closed block of it that has at least one invalid
//! page is offered to [`VictimPolicy::score`] as a [`Candidate`]; the highest score is collected,
//! ties going to the lowest block number. Greedy and FIFO keep their own indexes (they need no
//! scan); cost-benefit is the built-in scoring policy, and a policy of one's own is another
//! (`GcPolicy::Scored`). Scores are compared as `f64`s: infinity is allowed (cost-benefit's empty
//! block), and NaN counts as minus infinity.

use std::fmt;

/// A closed block offered as a victim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The block's number on the device.
    pub block: u32,
    /// Its pages that hold live data (less than `pages_per_block`).
    pub valid_pages: u32,
    pub pages_per_block: u32,
    /// Flash programs on the device since the block was closed, plus one.
    pub age: u64,
    /// Times the block has been erased.
    pub erase_count: u32,
}

impl Candidate {
    /// Its share of valid pages, `u`.
    pub fn utilisation(&self) -> f64 {
        self.valid_pages as f64 / self.pages_per_block as f64
    }
}

/// A GC victim policy that scores closed blocks; see the module documentation.
pub trait VictimPolicy: Send + Sync + fmt::Debug {
    /// The name the policy is selected by (`--gc NAME`, `[device] gc = "NAME"`).
    fn name(&self) -> &str;

    /// The block's worth as a victim: the highest score is collected.
    fn score(&self, block: &Candidate) -> f64;
}

/// Cost-benefit (Rosenblum & Ousterhout): age x (1 - u) / 2u, an empty block first.
#[derive(Clone, Copy, Debug, Default)]
pub struct CostBenefit;

impl VictimPolicy for CostBenefit {
    fn name(&self) -> &str {
        "cost-benefit"
    }

    fn score(&self, c: &Candidate) -> f64 {
        if c.valid_pages == 0 {
            return f64::INFINITY;
        }
        let u = c.utilisation();
        c.age as f64 * (1.0 - u) / (2.0 * u)
    }
}

/// The candidate with the highest score (ties: the lowest block number).
pub fn best(policy: &dyn VictimPolicy, candidates: impl Iterator<Item = Candidate>) -> Option<u32> {
    let mut best: Option<(f64, u32)> = None;
    for c in candidates {
        let score = policy.score(&c);
        let score = if score.is_nan() { f64::NEG_INFINITY } else { score };
        if best.is_none_or(|(s, b)| score > s || (score == s && c.block < b)) {
            best = Some((score, c.block));
        }
    }
    best.map(|(_, b)| b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(block: u32, valid_pages: u32, age: u64) -> Candidate {
        Candidate { block, valid_pages, pages_per_block: 64, age, erase_count: 0 }
    }

    #[test]
    fn the_highest_score_wins_and_ties_go_to_the_lowest_block() {
        let blocks = [block(7, 32, 10), block(3, 32, 10), block(9, 16, 1)];
        // (1 - u) / 2u: u = 0.5 gives 0.5 x age 10 = 5; u = 0.25 gives 1.5 x age 1 = 1.5.
        assert_eq!(best(&CostBenefit, blocks.into_iter()), Some(3));
        assert_eq!(best(&CostBenefit, [block(5, 60, 1000), block(6, 0, 1)].into_iter()), Some(6), "an empty block");
        assert_eq!(best(&CostBenefit, std::iter::empty()), None);
    }
}
