//! A repro's claims table: every figure and table of its paper as the numbers the paper states,
//! ours beside each, a verdict given by one rule, and the tested cause of a miss or "not
//! explained".
//!
//! The rule, the same for every repro: a claim *matches* when ours lies inside the paper's range
//! (a value is a range of one point; "at least" and "at most" are ranges open on one side) or
//! within 15 % of its nearest end; it *misses* when it is more than 30 % away or of the wrong
//! sign; between the two it is *near*. A claim whose run failed reads *failed*.
//!
//! A cause is only written where it was tested, by switching it off (or on) in an experiment
//! file of crates/lab/experiments that the cause names; a test holds every cause to a file that
//! exists. A miss without one reads "not explained".

use crate::report::model::{Cell, ResultTable};

/// The name of the claims table of a repro at the scale `scale` (its `[[scale]]` name): the key
/// by which `flashkv report DIR --claims-into FILE` finds the block it rewrites.
pub fn table_name(scale: &str) -> String {
    format!("claims ({scale})")
}

/// What the paper states: a number, a range, or a bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stated {
    Value(f64),
    Range(f64, f64),
    AtLeast(f64),
    AtMost(f64),
}

impl Stated {
    /// The stated bounds (lower, upper).
    fn bounds(self) -> (f64, f64) {
        match self {
            Stated::Value(v) => (v, v),
            Stated::Range(a, b) => (a.min(b), a.max(b)),
            Stated::AtLeast(v) => (v, f64::INFINITY),
            Stated::AtMost(v) => (f64::NEG_INFINITY, v),
        }
    }

    fn text(self) -> String {
        let n = |v: f64| crate::report::model::Cell::Number(v).to_string();
        match self {
            Stated::Value(v) => n(v),
            Stated::Range(a, b) => format!("{} to {}", n(a), n(b)),
            Stated::AtLeast(v) => format!(">= {}", n(v)),
            Stated::AtMost(v) => format!("<= {}", n(v)),
        }
    }
}

/// The verdict of one claim (see the module's rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Matches,
    Near,
    Misses,
    Failed,
}

impl Verdict {
    /// The rule: `ours` against what the paper states.
    pub fn of(stated: Stated, ours: Option<f64>) -> Verdict {
        let Some(x) = ours.filter(|x| x.is_finite()) else { return Verdict::Failed };
        let (lo, hi) = stated.bounds();
        if (lo..=hi).contains(&x) {
            return Verdict::Matches;
        }
        let end = if x < lo { lo } else { hi };
        // A sign the paper's range never takes is a miss however close.
        if (end > 0.0 && lo >= 0.0 && x < 0.0) || (end < 0.0 && hi <= 0.0 && x > 0.0) {
            return Verdict::Misses;
        }
        let off = if end == 0.0 { f64::INFINITY } else { (x - end).abs() / end.abs() };
        if off <= 0.15 {
            Verdict::Matches
        } else if off <= 0.30 {
            Verdict::Near
        } else {
            Verdict::Misses
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Verdict::Matches => "matches",
            Verdict::Near => "near",
            Verdict::Misses => "misses",
            Verdict::Failed => "failed",
        }
    }
}

/// One claim of the paper beside ours.
#[derive(Clone, Debug)]
pub struct Claim {
    /// Where the paper states it: "Fig. 9", "Table III", "§5.2".
    pub source: String,
    /// What is compared, with its unit.
    pub what: String,
    pub paper: Stated,
    /// The paper's words where they say more than the number ("most zones", "up to").
    pub paper_words: Option<String>,
    pub ours: Option<f64>,
    /// Why ours differs, as tested (naming its experiment file), when it does.
    pub cause: Option<&'static str>,
}

impl Claim {
    pub fn new(source: &str, what: impl Into<String>, paper: Stated, ours: Option<f64>) -> Claim {
        Claim { source: source.into(), what: what.into(), paper, paper_words: None, ours, cause: None }
    }

    /// The paper's own words for the claim, shown beside its number.
    pub fn words(mut self, words: &str) -> Claim {
        self.paper_words = Some(words.into());
        self
    }

    /// The tested cause of a difference (see the module's docs), shown when the claim does not
    /// match.
    pub fn cause(mut self, cause: &'static str) -> Claim {
        self.cause = Some(cause);
        self
    }

    pub fn verdict(&self) -> Verdict {
        Verdict::of(self.paper, self.ours)
    }
}

/// The claims as the report's table named [`table_name`], and a note counting the verdicts.
pub fn table(scale: &str, claims: &[Claim]) -> (ResultTable, String) {
    let mut count = [0usize; 4];
    let rows = claims
        .iter()
        .map(|c| {
            let v = c.verdict();
            count[v as usize] += 1;
            let paper = match &c.paper_words {
                Some(w) => format!("{} ({w})", c.paper.text()),
                None => c.paper.text(),
            };
            let cause = match (v, c.cause) {
                (Verdict::Matches, _) => "-",
                (_, Some(cause)) => cause,
                (_, None) => "not explained",
            };
            vec![
                Cell::Text(c.source.clone()),
                Cell::Text(c.what.clone()),
                Cell::Text(paper),
                // Unrounded: tables show 3-4 significant digits, JSON keeps them all.
                c.ours.map_or_else(super::failed, Cell::Number),
                Cell::Text(v.name().into()),
                Cell::Text(cause.into()),
            ]
        })
        .collect();
    let note = format!(
        "Claims: {} of the paper's numbers beside ours: {} match (inside the paper's range or within 15 %), {} near \
         (15-30 % off), {} miss (beyond 30 % or of the wrong sign), {} failed.",
        claims.len(),
        count[0],
        count[1],
        count[2],
        count[3]
    );
    let table = ResultTable {
        name: table_name(scale),
        columns: ["source", "claim", "paper", "ours", "verdict", "cause"].map(String::from).to_vec(),
        rows,
    };
    (table, note)
}

/// Every experiment file a cause names exists (for the repros' tests).
#[cfg(test)]
pub fn causes_name_files(claims: &[Claim]) -> Result<(), String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for c in claims {
        let Some(cause) = c.cause else { continue };
        let named: Vec<&str> = cause
            .split(|ch: char| ch.is_whitespace() || ch == '(' || ch == ')' || ch == ',' || ch == ';')
            .filter(|w| w.starts_with("crates/lab/experiments/"))
            .map(|w| w.trim_end_matches(['.', ':']))
            .collect();
        if named.is_empty() {
            return Err(format!("the cause of {} / {} names no experiment file: {cause}", c.source, c.what));
        }
        if let Some(missing) = named.iter().find(|f| !root.join(f).is_file()) {
            return Err(format!("the cause of {} / {} names {missing}, which does not exist", c.source, c.what));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_matches_inside_or_within_15_percent_and_misses_beyond_30_or_of_the_wrong_sign() {
        use Stated::*;
        use Verdict::*;
        let cases = [
            (Value(1.4), Some(1.4), Matches),
            (Value(1.4), Some(1.25), Matches),
            (Value(1.4), Some(1.10), Near),
            (Value(1.4), Some(0.9), Misses),
            (Value(18.0), Some(1.0), Misses),
            (Value(18.0), Some(-1.0), Misses),
            (Value(-51.0), Some(-44.0), Matches),
            (Value(-51.0), Some(-25.7), Misses),
            (Value(-3.8), Some(0.2), Misses),
            (Range(1.22, 1.65), Some(1.66), Matches),
            (Range(1.22, 1.65), Some(2.36), Misses),
            (Range(1.22, 1.65), Some(1.0), Near),
            (Range(5.4, 16.2), Some(-2.7), Misses),
            (AtLeast(50.0), Some(91.4), Matches),
            (AtMost(1.0), Some(0.9), Matches),
            (AtMost(1.6), Some(2.64), Misses),
            (Value(0.0), Some(0.0), Matches),
            (Value(0.0), Some(0.1), Misses),
            (Value(1.4), None, Failed),
            (Value(1.4), Some(f64::NAN), Failed),
        ];
        for (stated, ours, want) in cases {
            assert_eq!(Verdict::of(stated, ours), want, "{stated:?} against {ours:?}");
        }
    }

    #[test]
    fn the_table_says_not_explained_for_a_miss_without_a_cause_and_counts_verdicts() {
        let claims = [
            Claim::new("Fig. 1", "a", Stated::Value(2.0), Some(2.0)),
            Claim::new("Fig. 2", "b", Stated::Value(2.0), Some(1.0)),
            Claim::new("Fig. 3", "c", Stated::Value(2.0), Some(1.0)).cause("GC (crates/lab/experiments/demo.toml)"),
            Claim::new("Fig. 4", "d", Stated::Value(2.0), None).words("about"),
            Claim::new("Fig. 5", "e", Stated::Value(2.0), Some(2.1)).cause("x (crates/lab/experiments/demo.toml)"),
        ];
        let (t, note) = table("small", &claims);
        assert_eq!(t.name, "claims (small)");
        let col = |i: usize| t.rows.iter().map(|r| r[i].to_string()).collect::<Vec<_>>();
        assert_eq!(col(4), ["matches", "misses", "misses", "failed", "matches"]);
        assert_eq!(col(5)[..3], ["-", "not explained", "GC (crates/lab/experiments/demo.toml)"]);
        assert_eq!(col(5)[4], "-", "a matching claim needs no cause");
        assert_eq!(col(2)[3], "2 (about)");
        assert!(
            note.contains("5 of the paper's numbers") && note.contains("2 match") && note.contains("2 miss"),
            "{note}"
        );
        assert!(causes_name_files(&claims).is_ok());
        let bad = [Claim::new("Fig. 5", "e", Stated::Value(2.0), Some(1.0)).cause("padding")];
        assert!(causes_name_files(&bad).is_err());
        let gone = [Claim::new("F", "e", Stated::Value(2.0), Some(1.0)).cause("x (crates/lab/experiments/nope.toml)")];
        assert!(causes_name_files(&gone).is_err());
    }
}
