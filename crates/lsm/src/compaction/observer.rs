//! The plug-in point of the compaction merge. The job walks the merged input entries, decides for
//! each whether it is kept or dropped, and hands the decision to an observer together with where the
//! entry came from (input file and data block). The default observer writes kept entries to the
//! output; RemapCom's observer instead buffers them while it decides whether their input block
//! comes out unchanged, and clones unchanged blocks whole.

use super::output::OutputWriter;
use crate::error::Result;
use crate::sst::{BlockHandle, TableIterator};

/// Where a merged entry came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntrySource {
    /// Index of the input file in the job's input list (first-level inputs first).
    pub input: usize,
    pub file_number: u64,
    /// Index of the data block in that file, and its handle.
    pub block: usize,
    pub handle: BlockHandle,
}

/// One input file of a compaction, as observers see it.
#[derive(Clone, Debug)]
pub struct InputInfo {
    pub file_number: u64,
    pub path: String,
    pub level: usize,
    pub data_blocks: usize,
}

pub trait CompactionObserver {
    /// Called once before the merge with the input files.
    fn begin(&mut self, _inputs: &[InputInfo]) -> Result<()> {
        Ok(())
    }

    /// One merged entry and the job's decision. `iter` is the input's iterator positioned at it
    /// (for access to the current data block).
    fn on_entry(
        &mut self,
        out: &mut OutputWriter,
        src: EntrySource,
        iter: &TableIterator,
        key: &[u8],
        value: &[u8],
        kept: bool,
    ) -> Result<()>;

    /// Called after the last entry, before the outputs are finished.
    fn finish(&mut self, _out: &mut OutputWriter) -> Result<()> {
        Ok(())
    }
}

/// Writes every kept entry as it comes: plain LevelDB.
#[derive(Debug, Default)]
pub struct PassThrough;

impl CompactionObserver for PassThrough {
    fn on_entry(
        &mut self,
        out: &mut OutputWriter,
        _src: EntrySource,
        _iter: &TableIterator,
        key: &[u8],
        value: &[u8],
        kept: bool,
    ) -> Result<()> {
        if kept {
            out.add(key, value)?;
        }
        Ok(())
    }
}
