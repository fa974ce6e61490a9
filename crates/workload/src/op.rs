//! The operation stream every generator in this crate produces.
//!
//! Contract: an [`Op`] is what a key-value store is asked to do next, with its key and value bytes already built.
//! `Insert` and `Update` are both a put for a key-value store; the two names keep the generator's intent (a key the
//! generator believes new, versus one it believes present) so that reports can count them apart.
//! `Scan { start_key, len }` means: position an iterator at the first key `>= start_key`, then read up to `len`
//! records from there (`len = 0`: position only, as db_bench's seekrandom does). An empty `start_key` means the
//! beginning of the key space. `Next` reads the record after the one the previous `Next` read, in key order (the first
//! key at the first `Next`): db_bench's readseq is a `Next` per record, so that each record is one operation with its
//! own latency, as db_bench counts them.

/// One operation for a key-value store.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// Put of a key the generator has not produced before (YCSB insert, db_bench fill).
    Insert {
        /// Key bytes.
        key: Vec<u8>,
        /// Value bytes.
        value: Vec<u8>,
    },
    /// Point lookup.
    Read {
        /// Key bytes.
        key: Vec<u8>,
    },
    /// Put over a key the generator believes present (YCSB update, db_bench overwrite, Mixgraph put).
    Update {
        /// Key bytes.
        key: Vec<u8>,
        /// Value bytes (for YCSB: the field(s) written, see [`crate::ycsb`]).
        value: Vec<u8>,
    },
    /// Range read: seek to the first key `>= start_key`, then read up to `len` records.
    Scan {
        /// Seek target (empty = first key).
        start_key: Vec<u8>,
        /// Records to read from the seek position on (0 = position only).
        len: u64,
    },
    /// The record after the one the previous `Next` read, in key order (the first key at the first `Next`; none past
    /// the last key).
    Next,
    /// YCSB read-modify-write: read `key`, then put `value` under it.
    ReadModifyWrite {
        /// Key bytes.
        key: Vec<u8>,
        /// Value bytes written after the read.
        value: Vec<u8>,
    },
}

/// The kind of an [`Op`], without its payload (for counting and reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    /// [`Op::Insert`].
    Insert,
    /// [`Op::Read`].
    Read,
    /// [`Op::Update`].
    Update,
    /// [`Op::Scan`].
    Scan,
    /// [`Op::ReadModifyWrite`].
    ReadModifyWrite,
    /// [`Op::Next`].
    Next,
}

impl OpKind {
    /// All kinds, in YCSB's operation-chooser order (read, update, insert, scan, read-modify-write).
    pub const ALL: [OpKind; 5] = [OpKind::Read, OpKind::Update, OpKind::Insert, OpKind::Scan, OpKind::ReadModifyWrite];

    /// Lower-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Insert => "insert",
            OpKind::Read => "read",
            OpKind::Update => "update",
            OpKind::Scan => "scan",
            OpKind::ReadModifyWrite => "read_modify_write",
            OpKind::Next => "next",
        }
    }
}

impl Op {
    /// The same operation with its value's bytes set to zero (sizes unchanged): for runs whose
    /// results depend on sizes only, where a store that leaves out zero runs then keeps keys alone.
    pub fn zero_value(mut self) -> Op {
        if let Op::Insert { value, .. } | Op::Update { value, .. } | Op::ReadModifyWrite { value, .. } = &mut self {
            value.fill(0);
        }
        self
    }

    /// The operation's kind.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Insert { .. } => OpKind::Insert,
            Op::Read { .. } => OpKind::Read,
            Op::Update { .. } => OpKind::Update,
            Op::Scan { .. } => OpKind::Scan,
            Op::ReadModifyWrite { .. } => OpKind::ReadModifyWrite,
            Op::Next => OpKind::Next,
        }
    }

    /// The key (the seek target for a scan; none for a next).
    pub fn key(&self) -> &[u8] {
        match self {
            Op::Insert { key, .. } | Op::Read { key } | Op::Update { key, .. } | Op::ReadModifyWrite { key, .. } => key,
            Op::Scan { start_key, .. } => start_key,
            Op::Next => &[],
        }
    }

    /// The value written, if the operation writes.
    pub fn value(&self) -> Option<&[u8]> {
        match self {
            Op::Insert { value, .. } | Op::Update { value, .. } | Op::ReadModifyWrite { value, .. } => Some(value),
            Op::Read { .. } | Op::Scan { .. } | Op::Next => None,
        }
    }

    /// Key plus value bytes this operation asks the store to write (the `user_bytes` of the accounting contract).
    pub fn user_bytes(&self) -> u64 {
        match self.value() {
            Some(v) => (self.key().len() + v.len()) as u64,
            None => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors() {
        let op = Op::Update { key: b"k1".to_vec(), value: vec![0; 10] };
        assert_eq!(op.kind(), OpKind::Update);
        assert_eq!(op.key(), b"k1");
        assert_eq!(op.user_bytes(), 12);
        let scan = Op::Scan { start_key: b"a".to_vec(), len: 3 };
        assert_eq!(scan.value(), None);
        assert_eq!(scan.user_bytes(), 0);
        assert_eq!(OpKind::ReadModifyWrite.name(), "read_modify_write");
    }
}
