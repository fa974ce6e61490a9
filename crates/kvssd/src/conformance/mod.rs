//! The conformance suite every key-value SSD design passes: the same cases, written once, for the
//! designs of this crate (tests/conformance.rs) and for a plug-in's (a crate of one's own calls
//! [`run_all`] from a test, as examples/plugins does).
//!
//! Use: `kvssd::conformance::run_all(&|| Box::new(MyDevice::new(..).unwrap()) as Box<dyn KvDevice>)`.
//! Each case gets the constructor and builds the fresh devices it needs; `run_all` runs every case,
//! prints a line per case and panics at the end naming the cases that failed (a failing case does
//! not hide the others). This is test code: a case panics on a broken contract, naming the device,
//! the request and what was expected.
//!
//! The cases ([`CASES`]) hold a device to the `KvDevice` contract: random sequences against a
//! `HashMap` model ([`model`]), each request's semantics, the key and value limits, a full device,
//! and determinism. A constructor should make a small device (a few hundred KiB to a few MiB), on
//! which GC and compaction run within a case and which fills within thousands of stores. The
//! suite checks what the trait offers: point requests (the trait has no scans) and flushes;
//! power cuts are each design's own (its tests).
//!
//! [`model`] also serves the property tests of the crate's designs (tests/conformance.rs draws its
//! request sequences with proptest, which this library does not depend on).

mod cases;
pub mod model;

use std::panic::{catch_unwind, AssertUnwindSafe};

use self::cases::store_retrieve_delete_exist;
pub use self::cases::{fill_until_full, Filled, Make};
use self::cases::{full_device, key_and_value_limits, matches_a_hashmap, same_requests_same_device};

/// A named conformance case.
pub struct Case {
    /// What the case checks, as a short identifier.
    pub name: &'static str,
    /// Runs the case on fresh devices from the constructor; panics on failure.
    pub run: fn(Make),
}

/// Every case, in the order [`run_all`] runs them.
pub const CASES: &[Case] = &[
    Case { name: "store_retrieve_delete_exist", run: store_retrieve_delete_exist },
    Case { name: "key_and_value_limits", run: key_and_value_limits },
    Case { name: "matches_a_hashmap", run: matches_a_hashmap },
    Case { name: "full_device", run: full_device },
    Case { name: "same_requests_same_device", run: same_requests_same_device },
];

/// Runs every case on fresh devices from `make`; panics listing the failed cases.
pub fn run_all(make: Make) {
    let label = make().describe();
    let mut failed = Vec::new();
    for case in CASES {
        match catch_unwind(AssertUnwindSafe(|| (case.run)(make))) {
            Ok(()) => eprintln!("conformance {} on {label}: ok", case.name),
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                eprintln!("conformance {} on {label}: FAILED: {msg}", case.name);
                failed.push(format!("{}: {msg}", case.name));
            }
        }
    }
    assert!(failed.is_empty(), "{label}: {} conformance case(s) failed:\n{}", failed.len(), failed.join("\n"));
}

/// Runs the case called `name`; panics if there is none.
pub fn run_one(name: &str, make: Make) {
    let case = CASES.iter().find(|c| c.name == name);
    let case = case.unwrap_or_else(|| panic!("no conformance case named {name}"));
    (case.run)(make);
}
