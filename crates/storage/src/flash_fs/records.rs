//! The flash file system's durable state and the records that change it, with their byte
//! encoding: what its journal writes, whatever the placement.
//!
//! The durable state is what a remount after a power cut sees: the directories with their durable
//! entries, and for every inode its length as of its last `sync`, its write hint (where the
//! placement records it: a zoned file keeps its placement class and its I/O label) and the map
//! items that hold those bytes (a placement's [`MapItem`]: runs of LPNs on a block device, extents
//! in zones). Every decode is bounds-checked: damaged bytes give `None`, never a panic.

use std::collections::BTreeMap;
use std::fmt::Debug;

use super::meta_codec::{put_str, Cursor};
use super::namespace::DirChange;
use crate::fs::WriteHint;

/// One piece of an inode's durable map, as a placement writes it in the journal.
pub trait MapItem: Copy + Eq + Debug + Send + 'static {
    /// Whether an inode record carries the file's write hint.
    const HINT_IN_RECORD: bool;
    fn put(&self, out: &mut Vec<u8>);
    fn get(c: &mut Cursor) -> Option<Self>;
}

/// The durable state of a flash file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurableMeta<I> {
    /// Directory -> name -> inode. Every directory, including the root `""`.
    pub dirs: BTreeMap<String, BTreeMap<String, u64>>,
    pub inodes: BTreeMap<u64, DurableInode<I>>,
    pub next_ino: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurableInode<I> {
    pub len: u64,
    /// `WriteHint::None` where the placement does not record hints.
    pub hint: WriteHint,
    pub items: Vec<I>,
}

impl<I> Default for DurableInode<I> {
    fn default() -> Self {
        DurableInode { len: 0, hint: WriteHint::None, items: Vec::new() }
    }
}

/// One change to the durable state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<I> {
    Inode {
        ino: u64,
        len: u64,
        hint: WriteHint,
        items: Vec<I>,
    },
    /// A durable inode grew: its first `keep` items stay, `tail` follows them, its length is
    /// `len`. A sync writes this rather than the whole map, so that a file synced often (a
    /// manifest, a WAL) costs the journal the size of each sync's new items, not the square of
    /// its item count.
    InodeTail {
        ino: u64,
        len: u64,
        keep: u32,
        tail: Vec<I>,
    },
    InodeFree {
        ino: u64,
    },
    Link {
        dir: String,
        name: String,
        ino: u64,
    },
    Unlink {
        dir: String,
        name: String,
    },
    Mkdir {
        dir: String,
    },
    Rmdir {
        dir: String,
    },
    NextIno {
        next: u64,
    },
}

impl<I> From<DirChange> for Record<I> {
    fn from(c: DirChange) -> Record<I> {
        match c {
            DirChange::Link { dir, name, ino } => Record::Link { dir, name, ino },
            DirChange::Unlink { dir, name } => Record::Unlink { dir, name },
        }
    }
}

impl<I: MapItem> DurableMeta<I> {
    pub fn empty() -> DurableMeta<I> {
        let mut dirs = BTreeMap::new();
        dirs.insert(String::new(), BTreeMap::new());
        DurableMeta { dirs, inodes: BTreeMap::new(), next_ino: 1 }
    }

    pub fn apply(&mut self, r: &Record<I>) {
        match r {
            Record::Inode { ino, len, hint, items } => {
                self.inodes.insert(*ino, DurableInode { len: *len, hint: *hint, items: items.clone() });
            }
            Record::InodeTail { ino, len, keep, tail } => {
                if let Some(i) = self.inodes.get_mut(ino) {
                    i.items.truncate(*keep as usize);
                    i.items.extend_from_slice(tail);
                    i.len = *len;
                }
            }
            Record::InodeFree { ino } => {
                self.inodes.remove(ino);
            }
            Record::Link { dir, name, ino } => {
                self.dirs.entry(dir.clone()).or_default().insert(name.clone(), *ino);
            }
            Record::Unlink { dir, name } => {
                if let Some(d) = self.dirs.get_mut(dir) {
                    d.remove(name);
                }
            }
            Record::Mkdir { dir } => {
                self.dirs.entry(dir.clone()).or_default();
            }
            Record::Rmdir { dir } => {
                // The root always exists; a record that would remove it (only a damaged or foreign
                // journal holds one) leaves it, so the namespace keeps its invariant.
                if !dir.is_empty() {
                    self.dirs.remove(dir);
                }
            }
            Record::NextIno { next } => self.next_ino = self.next_ino.max(*next),
        }
    }

    /// The record that makes `ino`'s durable state `len` bytes in `items` with `hint`: the new
    /// tail alone when the durable inode already holds a prefix of `items` under the same hint.
    pub fn inode_record(&self, ino: u64, len: u64, hint: WriteHint, items: Vec<I>) -> Record<I> {
        match self.inodes.get(&ino) {
            Some(d) if d.hint == hint => {
                let keep = d.items.iter().zip(&items).take_while(|(a, b)| a == b).count();
                Record::InodeTail { ino, len, keep: keep as u32, tail: items[keep..].to_vec() }
            }
            _ => Record::Inode { ino, len, hint, items },
        }
    }

    /// Records that rebuild this state from empty (a snapshot).
    pub fn snapshot(&self) -> Vec<Record<I>> {
        let mut out = vec![Record::NextIno { next: self.next_ino }];
        for (ino, i) in &self.inodes {
            out.push(Record::Inode { ino: *ino, len: i.len, hint: i.hint, items: i.items.clone() });
        }
        for (dir, entries) in &self.dirs {
            out.push(Record::Mkdir { dir: dir.clone() });
            for (name, ino) in entries {
                out.push(Record::Link { dir: dir.clone(), name: name.clone(), ino: *ino });
            }
        }
        out
    }
}

fn hint_code(h: WriteHint) -> [u8; 2] {
    match h {
        WriteHint::None => [0, 0],
        WriteHint::Wal => [1, 0],
        WriteHint::Manifest => [2, 0],
        WriteHint::Flush => [3, 0],
        WriteHint::Compaction { output_level } => [4, output_level],
        WriteHint::Move { output_level } => [5, output_level],
        WriteHint::ShortLived { output_level } => [6, output_level],
        // Codes 128-255: a window's compaction output, the window in the low seven bits.
        WriteHint::Window { output_level, window } => [WINDOW_CODE | window.min(!WINDOW_CODE), output_level],
    }
}

/// The first hint code of [`WriteHint::Window`].
const WINDOW_CODE: u8 = 0x80;

fn hint_of(code: u8, level: u8) -> Option<WriteHint> {
    if code >= WINDOW_CODE {
        return Some(WriteHint::Window { output_level: level, window: code & !WINDOW_CODE });
    }
    Some(match code {
        0 => WriteHint::None,
        1 => WriteHint::Wal,
        2 => WriteHint::Manifest,
        3 => WriteHint::Flush,
        4 => WriteHint::Compaction { output_level: level },
        5 => WriteHint::Move { output_level: level },
        6 => WriteHint::ShortLived { output_level: level },
        _ => return None,
    })
}

pub(crate) fn encode<I: MapItem>(r: &Record<I>, out: &mut Vec<u8>) {
    match r {
        Record::Inode { ino, len, hint, items } => {
            out.push(1);
            out.extend_from_slice(&ino.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            if I::HINT_IN_RECORD {
                out.extend_from_slice(&hint_code(*hint));
            }
            put_items(out, items);
        }
        Record::InodeTail { ino, len, keep, tail } => {
            out.push(8);
            out.extend_from_slice(&ino.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&keep.to_le_bytes());
            put_items(out, tail);
        }
        Record::InodeFree { ino } => {
            out.push(2);
            out.extend_from_slice(&ino.to_le_bytes());
        }
        Record::Link { dir, name, ino } => {
            out.push(3);
            put_str(out, dir);
            put_str(out, name);
            out.extend_from_slice(&ino.to_le_bytes());
        }
        Record::Unlink { dir, name } => {
            out.push(4);
            put_str(out, dir);
            put_str(out, name);
        }
        Record::Mkdir { dir } => {
            out.push(5);
            put_str(out, dir);
        }
        Record::Rmdir { dir } => {
            out.push(6);
            put_str(out, dir);
        }
        Record::NextIno { next } => {
            out.push(7);
            out.extend_from_slice(&next.to_le_bytes());
        }
    }
}

fn put_items<I: MapItem>(out: &mut Vec<u8>, items: &[I]) {
    out.extend_from_slice(&(items.len() as u32).to_le_bytes());
    for i in items {
        i.put(out);
    }
}

fn items<I: MapItem>(c: &mut Cursor) -> Option<Vec<I>> {
    let n = c.u32()?;
    let mut items = Vec::with_capacity(n.min(1 << 16) as usize);
    for _ in 0..n {
        items.push(I::get(c)?);
    }
    Some(items)
}

/// Decodes a whole record stream; `None` if any byte is out of place.
pub(crate) fn decode_all<I: MapItem>(stream: &[u8]) -> Option<Vec<Record<I>>> {
    let mut c = Cursor(stream);
    let mut out = Vec::new();
    while !c.0.is_empty() {
        out.push(match c.u8()? {
            1 => {
                let (ino, len) = (c.u64()?, c.u64()?);
                let hint = if I::HINT_IN_RECORD { hint_of(c.u8()?, c.u8()?)? } else { WriteHint::None };
                Record::Inode { ino, len, hint, items: items(&mut c)? }
            }
            8 => Record::InodeTail { ino: c.u64()?, len: c.u64()?, keep: c.u32()?, tail: items(&mut c)? },
            2 => Record::InodeFree { ino: c.u64()? },
            3 => Record::Link { dir: c.string()?, name: c.string()?, ino: c.u64()? },
            4 => Record::Unlink { dir: c.string()?, name: c.string()? },
            5 => Record::Mkdir { dir: c.string()? },
            6 => Record::Rmdir { dir: c.string()? },
            7 => Record::NextIno { next: c.u64()? },
            _ => return None,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::super::block::LpnRun;
    use super::super::zone::Extent;
    use super::*;

    /// One record of every kind, with `item(k)` as the k-th map item.
    fn sample<I: MapItem>(item: impl Fn(u32) -> I) -> Vec<Record<I>> {
        let hint = |h| if I::HINT_IN_RECORD { h } else { WriteHint::None };
        vec![
            Record::Inode {
                ino: 3,
                len: 12345,
                hint: hint(WriteHint::Compaction { output_level: 4 }),
                items: vec![item(0), item(1)],
            },
            Record::Inode { ino: 4, len: 0, hint: hint(WriteHint::ShortLived { output_level: 2 }), items: vec![] },
            Record::Inode {
                ino: 5,
                len: 0,
                hint: hint(WriteHint::Window { output_level: 3, window: 2 }),
                items: vec![],
            },
            Record::Link { dir: "db".into(), name: "000001.log".into(), ino: 3 },
            Record::Unlink { dir: "db".into(), name: "x".into() },
            Record::Mkdir { dir: "db".into() },
            Record::Rmdir { dir: "old".into() },
            Record::InodeFree { ino: 9 },
            Record::NextIno { next: 10 },
            Record::InodeTail { ino: 3, len: 20000, keep: 1, tail: vec![item(2)] },
        ]
    }

    fn extent(k: u32) -> Extent {
        Extent { zone: 7 + k, start: 12 * k, bytes: 4153 + k as u64 }
    }

    fn run(k: u32) -> LpnRun {
        (100 + 900 * k, 4 - k)
    }

    fn stream<I: MapItem>(records: &[Record<I>]) -> Vec<u8> {
        let mut bytes = Vec::new();
        records.iter().for_each(|r| encode(r, &mut bytes));
        bytes
    }

    fn round_trip<I: MapItem>(rs: Vec<Record<I>>) {
        let bytes = stream(&rs);
        assert_eq!(decode_all::<I>(&bytes).unwrap(), rs);
        assert!(decode_all::<I>(&bytes[..bytes.len() - 1]).is_none());
        assert!(decode_all::<I>(&[99]).is_none());
        let mut meta = DurableMeta::empty();
        rs.iter().for_each(|r| meta.apply(r));
        let mut again = DurableMeta::empty();
        meta.snapshot().iter().for_each(|r| again.apply(r));
        assert_eq!(again, meta);
    }

    #[test]
    fn records_round_trip_and_garbage_is_rejected() {
        round_trip(sample(extent));
        round_trip(sample(run));
    }

    /// The block placement's records do not carry hints: its inode record is as it always was.
    #[test]
    fn an_inode_record_carries_a_hint_only_where_the_placement_keeps_hints() {
        let (z, b) = (sample(extent), sample(run));
        let (zs, bs) = (stream(&z[..1]), stream(&b[..1]));
        assert_eq!(zs.len(), 1 + 8 + 8 + 2 + 4 + 2 * 16);
        assert_eq!(bs.len(), 1 + 8 + 8 + 4 + 2 * 8);
    }

    /// Found by the fuzz target (30 M cases): a record stream whose damaged Rmdir names the root.
    /// The root stays, and a snapshot of the state rebuilds the same state.
    #[test]
    fn a_record_cannot_remove_the_root_directory() {
        let bytes = stream::<Extent>(&[Record::Mkdir { dir: "db".into() }, Record::Rmdir { dir: String::new() }]);
        let mut meta = DurableMeta::empty();
        decode_all::<Extent>(&bytes).unwrap().iter().for_each(|r| meta.apply(r));
        assert!(meta.dirs.contains_key(""), "the root directory is still there");
        let mut again = DurableMeta::empty();
        meta.snapshot().iter().for_each(|r| again.apply(r));
        assert_eq!(again, meta);
    }

    fn decodes_to_a_state_that_snapshots_again<I: MapItem>(
        bytes: &[u8],
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        if let Some(records) = decode_all::<I>(bytes) {
            let mut meta = DurableMeta::empty();
            records.iter().for_each(|r| meta.apply(r));
            let mut again = DurableMeta::empty();
            meta.snapshot().iter().for_each(|r| again.apply(r));
            proptest::prop_assert_eq!(again, meta);
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(super::super::meta_codec::fuzz::config())]

        /// The journal's record decoder on damaged streams: records or `None`, never a panic;
        /// whatever decodes applies to the durable state and snapshots again.
        #[test]
        fn damaged_zone_record_streams_decode_or_are_refused(
            bytes in super::super::meta_codec::fuzz::damaged(stream(&sample(extent)))
        ) {
            decodes_to_a_state_that_snapshots_again::<Extent>(&bytes)?;
        }

        #[test]
        fn damaged_block_record_streams_decode_or_are_refused(
            bytes in super::super::meta_codec::fuzz::damaged(stream(&sample(run)))
        ) {
            decodes_to_a_state_that_snapshots_again::<LpnRun>(&bytes)?;
        }
    }
}
