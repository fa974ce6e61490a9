//! The flash laboratory as a library: one typed run specification (`spec`), the storage stacks
//! (simulated SSDs, ZNS SSDs, key-value SSDs, real files), the one runner every command uses
//! (`runner`, and `batch` for many runs), results under docs/design.md's accounting names,
//! experiment files, the seed papers' repros and result folders. The `flashkv` command line and
//! the Python package are front ends over it.

pub mod batch;
pub mod bench;
pub mod block_replay;
pub mod calibrate;
pub mod cli;
pub mod demo;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod ftl;
pub mod harness;
pub mod input;
pub mod kv_device;
pub mod loop_device;
pub mod page_writes;
pub mod phases;
pub mod plugins;
pub mod progress;
pub mod publish;
pub mod ray;
pub mod repair;
pub mod report;
pub mod repro;
pub mod resources;
pub mod result;
pub mod run_cache;
pub mod runner;
pub mod simcost;
pub mod spec;
pub mod stack;
pub mod table;
pub mod workload_cmd;
