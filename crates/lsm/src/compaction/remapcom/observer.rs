//! [`RemapCom`]: the compaction observer that finds UDBs during the merge and clones them.
//!
//! One [`BlockState`] machine per input SST follows the data block of that SST the merge is in. For an
//! entry `e` of input `i`, block `b`, in merge order:
//! 1. `block_switch` to the undecided block of another input, if `e` is kept: `e` is about to be
//!    written, so that block's output would mix keys of two blocks. (A dropped `e` is never written and
//!    leaves the other block's output intact, so it does not switch it.)
//! 2. `block_start` for `i` if `b` is not the block its machine follows.
//! 3. `kv_reserved` or `kv_dropped` for `e`.
//! 4. `block_end` if `e` is the block's last entry (the block iterator's position tells, without parsing).
//!
//! Lazy write-back (section 4.3): while a block is `InProgress` its kept entries are held back. At most
//! one block is undecided at a time (a kept entry of any other input switches it), and its held entries
//! are exactly a prefix of the source block, so the data buffer is the parsed source block itself (its
//! bytes are shared, nothing is copied) plus a count, and the summary of its keys a clone needs
//! ([`BlockKeys`]: first, last, filter hashes), gathered as the merge passes them: one pass over each input
//! block, however it ends. When the block turns `Changed` the prefix is
//! written with `OutputWriter::add` at once, before the entry that changed it, and the block's later
//! entries go straight through; key order is kept because nothing after the prefix was written yet.
//! When it ends `Unchanged` (a UDB), it is cloned whole with `OutputWriter::add_cloned_block` where the
//! mode allows (see [`super`] for base vs full), else its entries are written with `add`.
//!
//! Contract: the output holds exactly the kept entries in merge order, whatever is cloned. A block is
//! cloned only if every one of its entries was traversed from its first, all were kept, in ascending order,
//! no other entry was written between them, and its SST is aligned (every data block at a multiple of the
//! file system's block size, and the clone range inside the file); anything unexpected (a block whose
//! end was not seen) falls back to writing, never to cloning.

use super::state_machine::{transition, BlockState, Event};
use super::{RemapMode, UdbStats};
use crate::compaction::observer::{CompactionObserver, EntrySource, InputInfo};
use crate::compaction::output::OutputWriter;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::sst::filter::FilterLayout;
use crate::sst::format::BLOCK_TRAILER_SIZE;
use crate::sst::{Block, BlockHandle, BlockKeys, TableIterator};

/// The input blocks found unchanged and those cloned, as (file number, block index), when tracing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UdbTrace {
    pub found: Vec<(u64, usize)>,
    pub cloned: Vec<(u64, usize)>,
}

/// One input SST: its state machine and what is needed to clone from it.
struct InputTrack {
    file_number: u64,
    path: String,
    /// The block the machine follows (`None` before the input's first entry).
    block: Option<usize>,
    state: BlockState,
    /// Whether the SST's data blocks are all aligned; learnt at its first block.
    aligned: Option<bool>,
    file_size: u64,
}

/// The one `InProgress` block: the data buffer of lazy write-back.
struct Pending {
    input: usize,
    block_index: usize,
    handle: BlockHandle,
    block: Block,
    first_value_len: usize,
    /// Entries traversed and reserved so far: the block's first `buffered` entries.
    buffered: usize,
}

/// The RemapCom observer; see the module documentation. One per compaction.
pub struct RemapCom {
    mode: RemapMode,
    fs_block: u64,
    inputs: Vec<InputTrack>,
    pending: Option<Pending>,
    /// The keys of the pending block traversed so far (kept between blocks for its buffers).
    keys: BlockKeys,
    stats: UdbStats,
    trace: Option<UdbTrace>,
}

impl RemapCom {
    /// An observer for `mode` on a file system whose clone unit is `fs_block_size` (`Fs::block_size`),
    /// writing tables whose filters are laid out as `filter_layout` (the cloned blocks' key hashes are
    /// that layout's). With `RemapMode::Off` it writes every kept entry as it comes, like `PassThrough`.
    pub fn new(mode: RemapMode, fs_block_size: u64, filter_layout: FilterLayout) -> RemapCom {
        RemapCom {
            mode,
            fs_block: fs_block_size.max(1),
            inputs: Vec::new(),
            pending: None,
            keys: BlockKeys::new(filter_layout),
            stats: UdbStats::default(),
            trace: None,
        }
    }

    /// Also records which blocks were found and cloned (tests, debugging).
    pub fn with_trace(mut self) -> RemapCom {
        self.trace = Some(UdbTrace::default());
        self
    }

    pub fn stats(&self) -> UdbStats {
        self.stats
    }

    pub fn trace(&self) -> Option<&UdbTrace> {
        self.trace.as_ref()
    }

    /// The undecided block of `input`, if it is the pending one.
    fn pending_of(&self, input: usize) -> bool {
        self.pending.as_ref().is_some_and(|p| p.input == input)
    }

    /// Feeds `event` to the pending block's machine and, as it can only end `Changed` here, writes its
    /// buffered entries back.
    fn change_pending(&mut self, event: Event, out: &mut OutputWriter) -> Result<()> {
        if let Some(p) = &self.pending {
            let t = &mut self.inputs[p.input];
            t.state = transition(t.state, event);
            if t.state != BlockState::Changed {
                // Keep the invariant "pending = InProgress" whatever the event did.
                t.state = BlockState::Changed;
            }
        }
        self.write_back(out)
    }

    /// Writes the pending block's buffered entries with `add` and forgets it.
    fn write_back(&mut self, out: &mut OutputWriter) -> Result<()> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        let mut it = p.block.iter();
        it.seek_to_first();
        for _ in 0..p.buffered {
            if !it.valid() {
                it.status()?;
                return Err(Error::corruption(
                    p.block.file(),
                    p.block.offset(),
                    "block holds fewer entries than the compaction traversed",
                ));
            }
            out.add(it.key(), it.value())?;
            it.next();
        }
        Ok(())
    }

    /// block_start for input `i` at the entry (`key`, `value`).
    fn start_block(
        &mut self,
        out: &mut OutputWriter,
        src: EntrySource,
        iter: &TableIterator,
        first_value_len: usize,
        kept: bool,
    ) -> Result<()> {
        let i = src.input;
        if self.pending_of(i) {
            // The input moved on without its block's end being seen: do not vouch for that block.
            self.change_pending(Event::KvDropped, out)?;
        }
        let fs_block = self.fs_block;
        let t = &mut self.inputs[i];
        t.block = Some(src.block);
        t.state = transition(t.state, Event::BlockStart);
        if t.aligned.is_none() {
            let table = iter.table();
            t.file_size = table.file_size();
            t.aligned = Some(table.data_block_handles().iter().all(|h| h.offset % fs_block == 0));
        }
        let (first, _) = iter.position_in_block();
        let Some(block) = iter.current_data_block().filter(|_| first) else {
            // Part of the block was never traversed (or it is unreadable here): it cannot be a UDB.
            t.state = BlockState::Changed;
            return Ok(());
        };
        // A dropped first entry changes the block at once; only a kept one opens the buffer.
        if kept {
            self.keys.clear();
            self.pending = Some(Pending {
                input: i,
                block_index: src.block,
                handle: src.handle,
                block,
                first_value_len,
                buffered: 0,
            });
        }
        Ok(())
    }

    /// block_end of the pending block, which was `InProgress`: a UDB. Clones it where the mode allows,
    /// else writes its entries.
    fn end_pending(&mut self, out: &mut OutputWriter) -> Result<()> {
        let Some(p) = self.pending.take() else {
            return Ok(());
        };
        let fs_block = self.fs_block;
        let t = &mut self.inputs[p.input];
        t.state = transition(t.state, Event::BlockEnd);
        if t.state != BlockState::Unchanged {
            self.pending = Some(p);
            return self.change_pending(Event::BlockSwitch, out);
        }
        self.stats.udbs_found += 1;
        if let Some(tr) = self.trace.as_mut() {
            tr.found.push((t.file_number, p.block_index));
        }
        let clone_len = (p.handle.size + BLOCK_TRAILER_SIZE as u64).div_ceil(fs_block) * fs_block;
        let clonable =
            t.aligned == Some(true) && p.handle.offset.checked_add(clone_len).is_some_and(|end| end <= t.file_size);
        let at_boundary = match out.current_builder() {
            None => true,
            Some(b) => b.current_block_is_empty() || !b.fits_in_current_block(self.keys.first(), p.first_value_len),
        };
        let clone = clonable
            && match self.mode {
                RemapMode::Off => false,
                RemapMode::Base => at_boundary,
                RemapMode::Full => true,
            };
        if !clone {
            self.stats.udbs_written += 1;
            self.pending = Some(p);
            return self.write_back(out);
        }
        if !at_boundary {
            // UDB retention: end the neighbour early rather than let it take the UDB's first key.
            out.flush_block()?;
            self.stats.udb_retentions += 1;
        }
        out.add_cloned_block(&t.path, p.handle, &p.block, &self.keys)?;
        self.stats.udbs_cloned += 1;
        if let Some(tr) = self.trace.as_mut() {
            tr.cloned.push((t.file_number, p.block_index));
        }
        Ok(())
    }
}

impl CompactionObserver for RemapCom {
    fn begin(&mut self, inputs: &[InputInfo]) -> Result<()> {
        self.pending = None;
        self.inputs = inputs
            .iter()
            .map(|f| InputTrack {
                file_number: f.file_number,
                path: f.path.clone(),
                block: None,
                state: BlockState::Changed,
                aligned: None,
                file_size: 0,
            })
            .collect();
        Ok(())
    }

    fn on_entry(
        &mut self,
        out: &mut OutputWriter,
        src: EntrySource,
        iter: &TableIterator,
        key: &[u8],
        value: &[u8],
        kept: bool,
    ) -> Result<()> {
        if self.mode == RemapMode::Off {
            return if kept { out.add(key, value) } else { Ok(()) };
        }
        let i = src.input;
        if i >= self.inputs.len() {
            return Err(Error::NoSuchInput { input: i, inputs: self.inputs.len() });
        }
        if kept && self.pending.as_ref().is_some_and(|p| p.input != i) {
            self.change_pending(Event::BlockSwitch, out)?;
        }
        if self.inputs[i].block != Some(src.block) {
            self.start_block(out, src, iter, value.len(), kept)?;
        }
        let event = if kept { Event::KvReserved } else { Event::KvDropped };
        let t = &mut self.inputs[i];
        t.state = transition(t.state, event);
        if t.state == BlockState::InProgress {
            if let Some(p) = self.pending.as_mut().filter(|p| p.input == i) {
                p.buffered += 1;
                if !self.keys.push(key) {
                    return Err(Error::corruption(
                        p.block.file(),
                        p.block.offset(),
                        "keys of a block are out of order",
                    ));
                }
                if iter.position_in_block().1 {
                    return self.end_pending(out);
                }
                return Ok(());
            }
            // InProgress without a buffer cannot be vouched for.
            t.state = BlockState::Changed;
        }
        if self.pending_of(i) {
            self.write_back(out)?;
        }
        if kept {
            out.add(key, value)?;
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut OutputWriter) -> Result<()> {
        // Every block's end is seen at its last entry; one left undecided is written, not cloned.
        self.change_pending(Event::BlockSwitch, out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use storage::{Fs, MemFs, WriteHint};

    use super::*;
    use crate::compaction::output::OutputLimits;
    use crate::key::{internal_key, ValueKind};
    use crate::options::{Options, ReadOptions};
    use crate::sst::{Table, TableBuilder};

    #[test]
    fn an_entry_of_an_input_the_compaction_lacks_is_refused() {
        let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
        let opts = Options { align_blocks: true, ..Options::default() };
        let key = internal_key(b"k", 1, ValueKind::Value);
        let mut b = TableBuilder::new(&opts, fs.create("000005.ldb").unwrap(), fs.block_size());
        b.add(&key, b"v").unwrap();
        b.finish().unwrap();
        let file: Arc<dyn storage::RandomAccessFile> = Arc::from(fs.open("000005.ldb").unwrap());
        let table = Table::open(file, fs.file_size("000005.ldb").unwrap(), 5, &opts, None).unwrap();
        let mut iter = table.iter(&ReadOptions::default());
        iter.seek_to_first();

        let mut next = 10;
        let mut new_number = || {
            next += 1;
            next
        };
        let limits = OutputLimits {
            max_file_size: opts.max_file_size,
            grandparents: &[],
            max_grandparent_overlap_bytes: u64::MAX,
            split_at: &[],
            short_lived_from: None,
            windows: None,
        };
        let mut out = OutputWriter::new(Arc::clone(&fs), "", &opts, WriteHint::None, &mut new_number, limits);
        let mut remap = RemapCom::new(RemapMode::Base, fs.block_size(), FilterLayout::PerBlock);
        // One input, but the entry claims to come from the second.
        let input = InputInfo { file_number: 5, path: "000005.ldb".into(), level: 1, data_blocks: 1 };
        remap.begin(&[input]).unwrap();
        let handle = table.data_block_handles()[0];
        let src = EntrySource { input: 1, file_number: 5, block: 0, handle };
        let r = remap.on_entry(&mut out, src, &iter, &key, b"v", true);
        assert!(matches!(r, Err(Error::NoSuchInput { input: 1, inputs: 1 })), "{r:?}");
        out.abandon();
    }
}
