//! What the crate-level tests share: the proptest strategy of crash histories
//! (`storage::history::Op`) that SimFs and ZoneFs are checked with against MemFs.

use proptest::prelude::*;
use proptest::strategy::Union;
use storage::history::Op;

/// One operation of a crash history: appends most often, then syncs, creates, directory syncs,
/// cloned appends and crashes, now and then a close, rename or remove; and, with `clone_into`,
/// `clone_range` into the middle of a file (which a zoned file system refuses).
pub fn history_op(clone_into: bool) -> BoxedStrategy<Op> {
    let b = any::<u8>;
    let mut arms: Vec<(u32, BoxedStrategy<Op>)> = vec![
        (2, b().prop_map(|file| Op::Create { file }).boxed()),
        (6, (b(), any::<u16>(), b()).prop_map(|(file, len, seed)| Op::Append { file, len, seed }).boxed()),
        (3, b().prop_map(|file| Op::Sync { file }).boxed()),
        (1, b().prop_map(|file| Op::Close { file }).boxed()),
        (2, b().prop_map(|dir| Op::SyncDir { dir }).boxed()),
        (1, (b(), b()).prop_map(|(from, to)| Op::Rename { from, to }).boxed()),
        (1, b().prop_map(|file| Op::Remove { file }).boxed()),
        (
            2,
            (b(), b(), b(), b())
                .prop_map(|(src, dst, block, blocks)| Op::AppendCloned { src, dst, block, blocks })
                .boxed(),
        ),
    ];
    if clone_into {
        let clone = (b(), b(), b(), b()).prop_map(|(src, dst, src_block, dst_block)| Op::CloneInto {
            src,
            dst,
            src_block,
            dst_block,
        });
        arms.push((1, clone.boxed()));
    }
    arms.push((2, Just(Op::Crash).boxed()));
    Union::new_weighted(arms).boxed()
}
