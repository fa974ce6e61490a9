//! `flashkv`: the command line of the flash laboratory (`lab::cli`), with no plug-ins.

fn main() -> std::process::ExitCode {
    lab::cli::main(lab::plugins::Registry::new())
}
