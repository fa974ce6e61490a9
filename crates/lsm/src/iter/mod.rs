//! The internal iterator every sorted source implements (memtable, SST block, SST, merges), over
//! internal keys in [`crate::key::compare_internal`] order.
//!
//! Contract: after any positioning call the iterator is either valid (key/value readable) or
//! exhausted; errors do not panic, they make the iterator invalid and show in [`status`]. An
//! iterator that met an error does not move on past it (to a later block or file): a caller that
//! finds it invalid asks `status()` before taking it as the end. `key` and `value` may only be
//! called while `valid()`.
//!
//! [`status`]: InternalIterator::status

use crate::error::Result;

pub trait InternalIterator: Send {
    fn valid(&self) -> bool;
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    /// Positions at the first entry whose key is >= `target`.
    fn seek(&mut self, target: &[u8]);
    fn next(&mut self);
    fn prev(&mut self);
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
}

/// An iterator over nothing, or over an error.
pub struct EmptyIterator(pub Result<()>);

impl InternalIterator for EmptyIterator {
    fn valid(&self) -> bool {
        false
    }
    fn seek_to_first(&mut self) {}
    fn seek_to_last(&mut self) {}
    fn seek(&mut self, _target: &[u8]) {}
    fn next(&mut self) {}
    fn prev(&mut self) {}
    fn key(&self) -> &[u8] {
        &[]
    }
    fn value(&self) -> &[u8] {
        &[]
    }
    fn status(&self) -> Result<()> {
        self.0.clone()
    }
}

pub mod level;
pub mod merging;

pub use merging::MergingIterator;
