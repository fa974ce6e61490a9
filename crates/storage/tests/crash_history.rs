//! Random histories of file operations and crashes on MemFs, checked against the model in `storage::history`.

use proptest::prelude::*;
use storage::history::{check_history, random_history, Op, Problem, Step, Subject};
use storage::MemFs;

fn op() -> impl Strategy<Value = Op> {
    let b = any::<u8>;
    prop_oneof![
        30 => (b(), any::<u16>(), b()).prop_map(|(file, len, seed)| Op::Append { file, len, seed }),
        15 => b().prop_map(|file| Op::Sync { file }),
        10 => b().prop_map(|file| Op::Create { file }),
        10 => b().prop_map(|dir| Op::SyncDir { dir }),
        5 => b().prop_map(|file| Op::Close { file }),
        6 => (b(), b()).prop_map(|(from, to)| Op::Rename { from, to }),
        5 => b().prop_map(|file| Op::Remove { file }),
        12 => (b(), b(), b(), b()).prop_map(|(src, dst, block, blocks)| Op::AppendCloned { src, dst, block, blocks }),
        8 => (b(), b(), b(), b())
            .prop_map(|(src, dst, src_block, dst_block)| Op::CloneInto { src, dst, src_block, dst_block }),
        3 => Just(Op::Crash),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn memfs_matches_the_crash_model(ops in proptest::collection::vec(op(), 1..120)) {
        let result = check_history(&ops, vec![Subject::mem(MemFs::new())]);
        prop_assert!(result.is_ok(), "{}", result.err().map(|e| e.to_string()).unwrap_or_default());
    }
}

#[test]
fn long_seeded_histories() {
    for seed in 0..20 {
        let ops = random_history(seed, 400);
        if let Err(e) = check_history(&ops, vec![Subject::mem(MemFs::new())]) {
            panic!("seed {seed}: {e}");
        }
    }
}

#[test]
fn two_subjects_run_side_by_side() {
    let ops = random_history(99, 300);
    let small_blocks = Subject { name: "MemFs(4K) #2".into(), ..Subject::mem(MemFs::new()) };
    check_history(&ops, vec![Subject::mem(MemFs::new()), small_blocks]).expect("two MemFs agree with the model");
}

/// The harness must be able to fail: a subject whose crash loses synced data is caught.
#[test]
fn a_subject_that_breaks_the_contract_is_caught() {
    let mem = MemFs::new();
    let broken = {
        let mem = mem.clone();
        move || {
            mem.crash();
            // Lose a synced file on top of the crash.
            let _ = storage::Fs::remove(&mem, "a/0");
        }
    };
    let subject = Subject { name: "broken".into(), fs: std::sync::Arc::new(mem), crash: Box::new(broken) };
    let ops = vec![
        Op::Create { file: 0 },
        Op::Append { file: 0, len: 100, seed: 1 },
        Op::Sync { file: 0 },
        Op::SyncDir { dir: 0 },
        Op::Crash,
    ];
    let err = check_history(&ops, vec![subject]).expect_err("the broken subject must fail");
    assert!(matches!(err.step, Step::After { index: 4, op: Op::Crash }) && err.subject == "broken", "{err}");
    assert!(matches!(err.problem, Problem::Differs(_)), "{err}");
    assert!(err.to_string().starts_with("after op 4 Crash: broken: files: found []"), "{err}");
}
