//! The classes of I/O operations that fault injection counts and fails (see `fault`).

/// The class of an I/O operation, for fault injection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IoClass {
    /// Reads of file data.
    Read,
    /// Appends, flushes and clones.
    Write,
    /// File and directory syncs.
    Sync,
    /// Namespace operations and opens.
    Metadata,
}

impl IoClass {
    /// All classes, in index order.
    pub const ALL: [IoClass; 4] = [IoClass::Read, IoClass::Write, IoClass::Sync, IoClass::Metadata];

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}
