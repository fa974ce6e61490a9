//! Where a flush or compaction writes: a sequence of output SSTs, each closed at the target file
//! size or, for compactions, when it would overlap too many grandparent bytes (so that compacting it
//! later stays cheap), or before a key at or past one of the strategy's split points. A file whose
//! first key is in the strategy's short-lived range is created with the short-lived hint, and one
//! written to a level with placement windows with the hint of the window its first key falls in.
//! Files are synced when closed; a failed job removes what it wrote.

use std::cmp::Ordering;
use std::sync::Arc;

use storage::{CloneOutcome, Fs, WriteHint};

use crate::error::Result;
use crate::filename;
use crate::key::{compare_internal, user_key};
use crate::options::Options;
use crate::sst::{Block, BlockHandle, BlockKeys, TableBuilder, TableProperties};
use crate::version::FileMeta;

/// A finished output SST.
#[derive(Clone, Debug)]
pub struct OutputFile {
    pub number: u64,
    pub size: u64,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
    pub props: TableProperties,
    /// Written with the short-lived hint (the T-zone).
    pub short_lived: bool,
    /// The level it was written for.
    pub level: usize,
}

/// When an output file is closed: at `max_file_size`, once it overlaps more than
/// `max_grandparent_overlap_bytes` of `grandparents` (the files of the level below the output), or
/// before a user key at or past one of `split_at` (sorted); and which outputs are short-lived.
pub struct OutputLimits<'a> {
    pub max_file_size: u64,
    pub grandparents: &'a [Arc<FileMeta>],
    pub max_grandparent_overlap_bytes: u64,
    pub split_at: &'a [Vec<u8>],
    /// Outputs whose first user key is at or past this are written with the short-lived hint.
    pub short_lived_from: Option<&'a [u8]>,
    /// The user keys where the level's placement windows begin (sorted), if it has windows: an
    /// output is written with [`WriteHint::Window`], its window the number of these at or below its
    /// first user key.
    pub windows: Option<&'a [Vec<u8>]>,
}

pub struct OutputWriter<'a> {
    fs: Arc<dyn Fs>,
    dir: String,
    options: &'a Options,
    hint: WriteHint,
    new_number: &'a mut dyn FnMut() -> u64,
    /// The open output: its number, builder and whether it is short-lived.
    current: Option<(u64, TableBuilder, bool)>,
    outputs: Vec<OutputFile>,
    max_file_size: u64,
    grandparents: &'a [Arc<FileMeta>],
    gp_index: usize,
    seen_key: bool,
    overlapped_bytes: u64,
    max_overlap: u64,
    split_at: &'a [Vec<u8>],
    /// The first split point past every key written so far.
    next_split: usize,
    short_lived_from: Option<&'a [u8]>,
    windows: Option<&'a [Vec<u8>]>,
    /// Bytes placed by cloning and by the copy fallback, over all outputs.
    pub placed: CloneOutcome,
}

impl<'a> OutputWriter<'a> {
    pub fn new(
        fs: Arc<dyn Fs>,
        dir: &str,
        options: &'a Options,
        hint: WriteHint,
        new_number: &'a mut dyn FnMut() -> u64,
        limits: OutputLimits<'a>,
    ) -> OutputWriter<'a> {
        OutputWriter {
            fs,
            dir: dir.to_string(),
            options,
            hint,
            new_number,
            current: None,
            outputs: Vec::new(),
            max_file_size: limits.max_file_size,
            grandparents: limits.grandparents,
            gp_index: 0,
            seen_key: false,
            overlapped_bytes: 0,
            max_overlap: limits.max_grandparent_overlap_bytes,
            split_at: limits.split_at,
            next_split: 0,
            short_lived_from: limits.short_lived_from,
            windows: limits.windows,
            placed: CloneOutcome::default(),
        }
    }

    /// Appends an entry to the current output, opening or closing files as needed.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if self.should_stop_before(key) && self.current.is_some() {
            self.finish_file()?;
        }
        self.builder(key)?.add(key, value)?;
        if self.builder(key)?.file_size() >= self.max_file_size {
            self.finish_file()?;
        }
        Ok(())
    }

    /// Places a whole data block of another SST by cloning (RemapCom's UDB output); `keys` are the
    /// block's keys (its first key makes the file-switch decisions that `add` would make).
    pub fn add_cloned_block(
        &mut self,
        src_path: &str,
        handle: BlockHandle,
        block: &Block,
        keys: &BlockKeys,
    ) -> Result<CloneOutcome> {
        let first_key = keys.first();
        if self.should_stop_before(first_key) && self.current.is_some() {
            self.finish_file()?;
        }
        let outcome = self.builder(first_key)?.add_cloned_block(src_path, handle, block, keys)?;
        self.placed.add(outcome);
        if self.builder(first_key)?.file_size() >= self.max_file_size {
            self.finish_file()?;
        }
        Ok(outcome)
    }

    /// The open builder, if an output file is open.
    pub fn current_builder(&mut self) -> Option<&mut TableBuilder> {
        self.current.as_mut().map(|(_, b, _)| b)
    }

    /// Closes the current data block of the open output (UDB retention ends a neighbour early).
    pub fn flush_block(&mut self) -> Result<()> {
        match self.current.as_mut() {
            Some((_, b, _)) => b.flush_data_block(),
            None => Ok(()),
        }
    }

    /// Finishes the last output and returns them all.
    pub fn finish(mut self) -> Result<Vec<OutputFile>> {
        if self.current.is_some() {
            self.finish_file()?;
        }
        Ok(std::mem::take(&mut self.outputs))
    }

    /// Removes every file this writer created (the job failed).
    pub fn abandon(mut self) {
        if let Some((n, mut b, _)) = self.current.take() {
            b.abandon();
            let _ = self.fs.remove(&filename::table_name(&self.dir, n));
        }
        for o in &self.outputs {
            let _ = self.fs.remove(&filename::table_name(&self.dir, o.number));
        }
    }

    /// Numbers of the outputs finished so far.
    pub fn output_numbers(&self) -> Vec<u64> {
        self.outputs.iter().map(|o| o.number).chain(self.current.as_ref().map(|(n, _, _)| *n)).collect()
    }

    /// The level this writer's outputs belong to.
    fn level(&self) -> usize {
        self.hint.level().map_or(0, usize::from)
    }

    /// The open builder, or a new one for an output that starts with `first_key`.
    fn builder(&mut self, first_key: &[u8]) -> Result<&mut TableBuilder> {
        if self.current.is_none() {
            let number = (self.new_number)();
            let path = filename::table_name(&self.dir, number);
            let short_lived = self.short_lived_from.is_some_and(|from| user_key(first_key) >= from);
            let hint = match (short_lived, self.hint.level(), self.windows) {
                (true, Some(output_level), _) => WriteHint::ShortLived { output_level },
                (false, Some(output_level), Some(bounds)) => {
                    let ukey = user_key(first_key);
                    let window = bounds.partition_point(|b| b.as_slice() <= ukey);
                    WriteHint::Window { output_level, window: window.min(u8::MAX as usize) as u8 }
                }
                _ => self.hint,
            };
            let file = self.options.create_file(&*self.fs, &path, hint)?;
            let b = TableBuilder::new(self.options, file, self.fs.block_size());
            self.current = Some((number, b, short_lived));
        }
        match self.current.as_mut() {
            Some((_, b, _)) => Ok(b),
            None => Err(crate::error::Error::Closed),
        }
    }

    fn finish_file(&mut self) -> Result<()> {
        let Some((number, mut b, short_lived)) = self.current.take() else {
            return Ok(());
        };
        let props = match b.finish() {
            Ok(p) => p,
            Err(e) => {
                self.outputs.push(OutputFile {
                    number,
                    size: 0,
                    smallest: Vec::new(),
                    largest: Vec::new(),
                    props: Default::default(),
                    short_lived,
                    level: self.level(),
                });
                return Err(e);
            }
        };
        let mut file = b.into_file();
        let synced = file.sync();
        self.outputs.push(OutputFile {
            number,
            size: props.file_size,
            smallest: props.smallest_key.clone(),
            largest: props.largest_key.clone(),
            props,
            short_lived,
            level: self.level(),
        });
        synced?;
        // Grandparent overlap restarts with each file.
        self.overlapped_bytes = 0;
        Ok(())
    }

    /// Whether the output must end before `ikey`: it would cross a split point, or (LevelDB's
    /// ShouldStopBefore) the output so far overlaps too many grandparent bytes.
    fn should_stop_before(&mut self, ikey: &[u8]) -> bool {
        let ukey = user_key(ikey);
        let mut crossed = false;
        while self.split_at.get(self.next_split).is_some_and(|s| ukey >= s.as_slice()) {
            self.next_split += 1;
            crossed = true;
        }
        // Before the first key there is no output to end.
        let crossed = crossed && self.seen_key;
        let overlapping = self.grandparent_overlap_exceeded(ikey);
        crossed || overlapping
    }

    /// LevelDB's ShouldStopBefore: counts the grandparent bytes the output has passed by `ikey`.
    fn grandparent_overlap_exceeded(&mut self, ikey: &[u8]) -> bool {
        while self.gp_index < self.grandparents.len()
            && compare_internal(ikey, &self.grandparents[self.gp_index].largest) == Ordering::Greater
        {
            if self.seen_key {
                self.overlapped_bytes += self.grandparents[self.gp_index].size;
            }
            self.gp_index += 1;
        }
        self.seen_key = true;
        if self.overlapped_bytes > self.max_overlap {
            self.overlapped_bytes = 0;
            return true;
        }
        false
    }
}
