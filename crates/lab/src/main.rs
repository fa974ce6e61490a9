//! `flashkv`: the command line of the flash laboratory (`lab::cli`), with no plug-ins.

/// mimalloc rather than the system's allocator: a simulated run allocates and frees a buffer per
/// page, block and file write-back, and glibc's malloc took 15-21 % of a paper-scale zns-ll run's
/// CPU samples (`perf`). Measured with the same results byte for byte: the tiny zns-ll repro 1.35-1.42x
/// faster in wall time, a 1/8-scale zns-ll fillrandom 1.23x with 6 % more peak memory
/// (docs/performance.md, "The binary's allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    lab::cli::main(lab::plugins::Registry::new())
}
