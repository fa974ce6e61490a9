//! RemapCom's block state machine (seed 000 section 4.2, Figure 6 and Table 1): one per input SST,
//! tracking the data block of that SST the merge is walking now.
//!
//! States: `Begin` (the block's first entry is being traversed), `InProgress` (every entry so far is
//! reserved and nothing else was written in between: the block may still come out unchanged),
//! `Changed` and `Unchanged` (final; `Unchanged` = the block is a UDB).
//!
//! Events: `block_start` (first entry of a block), `kv_reserved` / `kv_dropped` (the entry is kept /
//! dropped by the merge), `block_switch` (an entry of another block is written to the output while
//! this block is undecided, so the output block would mix the two), `block_end` (the block's last
//! entry has been traversed).
//!
//! Contract: [`transition`] is a total, pure function. The events the observer never sends in a state
//! (a `block_end` before any entry, an entry after the block ended) resolve toward `Changed` or keep
//! the final state, never toward `Unchanged`: a wrong `Changed` only costs a rewrite, a wrong
//! `Unchanged` would remap stale bytes. A machine is one byte (the paper: under 4 bytes).

/// The state of the data block a machine tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BlockState {
    Begin,
    InProgress,
    Changed,
    Unchanged,
}

/// What the merge reports about the tracked block (seed 000 Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Event {
    BlockStart,
    KvReserved,
    KvDropped,
    BlockSwitch,
    BlockEnd,
}

impl BlockState {
    pub const ALL: [BlockState; 4] =
        [BlockState::Begin, BlockState::InProgress, BlockState::Changed, BlockState::Unchanged];

    /// Whether the block's fate is decided.
    pub fn is_final(self) -> bool {
        matches!(self, BlockState::Changed | BlockState::Unchanged)
    }
}

impl Event {
    pub const ALL: [Event; 5] =
        [Event::BlockStart, Event::KvReserved, Event::KvDropped, Event::BlockSwitch, Event::BlockEnd];
}

/// The transition function of Figure 6; see the module contract for the events outside the figure.
pub const fn transition(state: BlockState, event: Event) -> BlockState {
    use BlockState::*;
    use Event::*;
    match (state, event) {
        // Any state: the machine is reused for the SST's next block.
        (_, BlockStart) => Begin,
        (Begin | InProgress, KvReserved) => InProgress,
        (Begin | InProgress, KvDropped | BlockSwitch) => Changed,
        (InProgress, BlockEnd) => Unchanged,
        // A block that ends with no entry traversed cannot be vouched for.
        (Begin, BlockEnd) => Changed,
        (Changed, _) => Changed,
        // An entry after the end means the end was wrong: no longer vouch for the block.
        (Unchanged, KvReserved | KvDropped) => Changed,
        // Once ended, later interleavings in the output concern other blocks.
        (Unchanged, BlockSwitch | BlockEnd) => Unchanged,
    }
}

/// Runs `events` from `Begin` (convenience for tests and tracing).
pub fn run(events: &[Event]) -> BlockState {
    events.iter().fold(BlockState::Begin, |s, &e| transition(s, e))
}

#[cfg(test)]
mod tests {
    use super::BlockState::*;
    use super::Event::*;
    use super::*;

    #[test]
    fn machine_is_one_byte() {
        assert_eq!(std::mem::size_of::<BlockState>(), 1);
    }

    #[test]
    fn figure_6_transitions() {
        // Every edge of Figure 6.
        assert_eq!(transition(Begin, KvReserved), InProgress);
        assert_eq!(transition(InProgress, KvReserved), InProgress);
        assert_eq!(transition(Begin, KvDropped), Changed);
        assert_eq!(transition(InProgress, KvDropped), Changed);
        assert_eq!(transition(Begin, BlockSwitch), Changed);
        assert_eq!(transition(InProgress, BlockSwitch), Changed);
        assert_eq!(transition(InProgress, BlockEnd), Unchanged);
        for s in BlockState::ALL {
            assert_eq!(transition(s, BlockStart), Begin, "block_start from {s:?}");
        }
    }

    #[test]
    fn changed_is_absorbing_until_the_next_block() {
        for e in Event::ALL {
            let want = if e == BlockStart { Begin } else { Changed };
            assert_eq!(transition(Changed, e), want, "{e:?}");
        }
    }

    #[test]
    fn events_outside_the_figure_never_yield_unchanged() {
        assert_eq!(transition(Begin, BlockEnd), Changed);
        assert_eq!(transition(Unchanged, KvReserved), Changed);
        assert_eq!(transition(Unchanged, KvDropped), Changed);
        assert_eq!(transition(Unchanged, BlockSwitch), Unchanged);
        assert_eq!(transition(Unchanged, BlockEnd), Unchanged);
    }

    #[test]
    fn figure_7_examples() {
        // Block A of Figure 7: 15 and 26 reserved, 30 dropped: changed.
        assert_eq!(run(&[BlockStart, KvReserved, KvReserved, KvDropped]), Changed);
        // A block whose every entry is reserved, with no interleaving: a UDB.
        assert_eq!(run(&[BlockStart, KvReserved, KvReserved, KvReserved, BlockEnd]), Unchanged);
        // Traversal moved to block B before A ended.
        assert_eq!(run(&[BlockStart, KvReserved, BlockSwitch, KvReserved, BlockEnd]), Changed);
        // A single-entry block (a value as large as a page).
        assert_eq!(run(&[BlockStart, KvReserved, BlockEnd]), Unchanged);
    }

    /// Exhaustive over short event sequences: Unchanged is reached iff the sequence since the last
    /// block_start is one or more kv_reserved, then block_end, then only block_switch / block_end.
    #[test]
    fn unchanged_iff_all_reserved_then_end() {
        fn model(events: &[Event]) -> bool {
            let start = events.iter().rposition(|&e| e == BlockStart).map_or(0, |i| i + 1);
            let tail = &events[start..];
            let reserved = tail.iter().take_while(|&&e| e == KvReserved).count();
            if reserved == 0 || tail.get(reserved) != Some(&BlockEnd) {
                return false;
            }
            tail[reserved + 1..].iter().all(|&e| matches!(e, BlockSwitch | BlockEnd))
        }
        let mut seqs: Vec<Vec<Event>> = vec![vec![]];
        for _ in 0..6 {
            let mut next = Vec::new();
            for s in &seqs {
                for e in Event::ALL {
                    let mut t = s.clone();
                    t.push(e);
                    next.push(t);
                }
            }
            for s in &next {
                assert_eq!(run(s) == Unchanged, model(s), "{s:?}");
            }
            seqs = next;
        }
    }
}
