//! ZoneFs's durable state and the records that change it, with their byte encoding.
//!
//! The durable state is what a remount after a power cut sees: the directories with their durable
//! entries, and for every inode its length as of its last `sync`, its write hint (so that a
//! remounted file keeps its placement class and its I/O label) and the extents that hold those
//! bytes. Every decode is bounds-checked: damaged bytes give `None`, never a panic.

use std::collections::BTreeMap;

use super::extent::Extent;
use crate::fs::WriteHint;
use crate::meta_codec::{put_str, Cursor};
use crate::namespace::DirChange;

/// The durable state of a ZoneFs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DurableMeta {
    /// Directory -> name -> inode. Every directory, including the root `""`.
    pub dirs: BTreeMap<String, BTreeMap<String, u64>>,
    pub inodes: BTreeMap<u64, DurableInode>,
    pub next_ino: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct DurableInode {
    pub len: u64,
    pub hint: WriteHint,
    pub extents: Vec<Extent>,
}

/// One change to the durable state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Record {
    Inode {
        ino: u64,
        len: u64,
        hint: WriteHint,
        extents: Vec<Extent>,
    },
    /// A durable inode grew: its first `keep` extents stay, `tail` follows them, its length is
    /// `len`. A sync writes this rather than the whole extent list, so that a file synced often (a
    /// manifest, a WAL) costs the journal the size of each sync's new extents, not the square of
    /// its extent count.
    InodeTail {
        ino: u64,
        len: u64,
        keep: u32,
        tail: Vec<Extent>,
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

impl From<DirChange> for Record {
    fn from(c: DirChange) -> Record {
        match c {
            DirChange::Link { dir, name, ino } => Record::Link { dir, name, ino },
            DirChange::Unlink { dir, name } => Record::Unlink { dir, name },
        }
    }
}

impl DurableMeta {
    pub fn empty() -> DurableMeta {
        let mut m = DurableMeta { next_ino: 1, ..Default::default() };
        m.dirs.insert(String::new(), BTreeMap::new());
        m
    }

    pub fn apply(&mut self, r: &Record) {
        match r {
            Record::Inode { ino, len, hint, extents } => {
                self.inodes.insert(*ino, DurableInode { len: *len, hint: *hint, extents: extents.clone() });
            }
            Record::InodeTail { ino, len, keep, tail } => {
                if let Some(i) = self.inodes.get_mut(ino) {
                    i.extents.truncate(*keep as usize);
                    i.extents.extend_from_slice(tail);
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

    /// The record that makes `ino`'s durable state `len` bytes in `extents` with `hint`: the new
    /// tail alone when the durable inode already holds a prefix of `extents` under the same hint.
    pub fn inode_record(&self, ino: u64, len: u64, hint: WriteHint, extents: Vec<Extent>) -> Record {
        match self.inodes.get(&ino) {
            Some(d) if d.hint == hint => {
                let keep = d.extents.iter().zip(&extents).take_while(|(a, b)| a == b).count();
                Record::InodeTail { ino, len, keep: keep as u32, tail: extents[keep..].to_vec() }
            }
            _ => Record::Inode { ino, len, hint, extents },
        }
    }

    /// Records that rebuild this state from empty (a snapshot).
    pub fn snapshot(&self) -> Vec<Record> {
        let mut out = vec![Record::NextIno { next: self.next_ino }];
        for (ino, i) in &self.inodes {
            out.push(Record::Inode { ino: *ino, len: i.len, hint: i.hint, extents: i.extents.clone() });
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

pub(crate) fn encode(r: &Record, out: &mut Vec<u8>) {
    match r {
        Record::Inode { ino, len, hint, extents } => {
            out.push(1);
            out.extend_from_slice(&ino.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&hint_code(*hint));
            put_extents(out, extents);
        }
        Record::InodeTail { ino, len, keep, tail } => {
            out.push(8);
            out.extend_from_slice(&ino.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&keep.to_le_bytes());
            put_extents(out, tail);
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

fn put_extents(out: &mut Vec<u8>, extents: &[Extent]) {
    out.extend_from_slice(&(extents.len() as u32).to_le_bytes());
    for e in extents {
        out.extend_from_slice(&e.zone.to_le_bytes());
        out.extend_from_slice(&e.start.to_le_bytes());
        out.extend_from_slice(&e.bytes.to_le_bytes());
    }
}

fn extents(c: &mut Cursor) -> Option<Vec<Extent>> {
    let n = c.u32()?;
    let mut extents = Vec::with_capacity(n.min(1 << 16) as usize);
    for _ in 0..n {
        extents.push(Extent { zone: c.u32()?, start: c.u32()?, bytes: c.u64()? });
    }
    Some(extents)
}

/// Decodes a whole record stream; `None` if any byte is out of place.
pub(crate) fn decode_all(stream: &[u8]) -> Option<Vec<Record>> {
    let mut c = Cursor(stream);
    let mut out = Vec::new();
    while !c.0.is_empty() {
        out.push(match c.u8()? {
            1 => {
                let (ino, len) = (c.u64()?, c.u64()?);
                let hint = hint_of(c.u8()?, c.u8()?)?;
                Record::Inode { ino, len, hint, extents: extents(&mut c)? }
            }
            8 => Record::InodeTail { ino: c.u64()?, len: c.u64()?, keep: c.u32()?, tail: extents(&mut c)? },
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
    use super::*;

    /// One record of every kind.
    fn sample() -> Vec<Record> {
        vec![
            Record::Inode {
                ino: 3,
                len: 12345,
                hint: WriteHint::Compaction { output_level: 4 },
                extents: vec![Extent { zone: 7, start: 12, bytes: 8192 }, Extent { zone: 9, start: 0, bytes: 4153 }],
            },
            Record::Inode { ino: 4, len: 0, hint: WriteHint::ShortLived { output_level: 2 }, extents: vec![] },
            Record::Inode { ino: 5, len: 0, hint: WriteHint::Window { output_level: 3, window: 2 }, extents: vec![] },
            Record::Link { dir: "db".into(), name: "000001.log".into(), ino: 3 },
            Record::Unlink { dir: "db".into(), name: "x".into() },
            Record::Mkdir { dir: "db".into() },
            Record::Rmdir { dir: "old".into() },
            Record::InodeFree { ino: 9 },
            Record::NextIno { next: 10 },
            Record::InodeTail { ino: 3, len: 20000, keep: 1, tail: vec![Extent { zone: 11, start: 3, bytes: 7000 }] },
        ]
    }

    fn valid_stream() -> Vec<u8> {
        let mut bytes = Vec::new();
        sample().iter().for_each(|r| encode(r, &mut bytes));
        bytes
    }

    #[test]
    fn records_round_trip_and_garbage_is_rejected() {
        let (rs, bytes) = (sample(), valid_stream());
        assert_eq!(decode_all(&bytes).unwrap(), rs);
        assert!(decode_all(&bytes[..bytes.len() - 1]).is_none());
        assert!(decode_all(&[99]).is_none());
        let mut meta = DurableMeta::empty();
        rs.iter().for_each(|r| meta.apply(r));
        let mut again = DurableMeta::empty();
        meta.snapshot().iter().for_each(|r| again.apply(r));
        assert_eq!(again, meta);
    }

    /// Found by the fuzz target (30 M cases): a record stream whose damaged Rmdir names the root.
    /// The root stays, and a snapshot of the state rebuilds the same state.
    #[test]
    fn a_record_cannot_remove_the_root_directory() {
        let mut bytes = Vec::new();
        for r in [Record::Mkdir { dir: "db".into() }, Record::Rmdir { dir: String::new() }] {
            encode(&r, &mut bytes);
        }
        let mut meta = DurableMeta::empty();
        decode_all(&bytes).unwrap().iter().for_each(|r| meta.apply(r));
        assert!(meta.dirs.contains_key(""), "the root directory is still there");
        let mut again = DurableMeta::empty();
        meta.snapshot().iter().for_each(|r| again.apply(r));
        assert_eq!(again, meta);
    }

    proptest::proptest! {
        #![proptest_config(crate::meta_codec::fuzz::config())]

        /// The journal's record decoder on damaged streams: records or `None`, never a panic;
        /// whatever decodes applies to the durable state and snapshots again.
        #[test]
        fn damaged_record_streams_decode_or_are_refused(bytes in crate::meta_codec::fuzz::damaged(valid_stream())) {
            if let Some(records) = decode_all(&bytes) {
                let mut meta = DurableMeta::empty();
                records.iter().for_each(|r| meta.apply(r));
                let mut again = DurableMeta::empty();
                meta.snapshot().iter().for_each(|r| again.apply(r));
                proptest::prop_assert_eq!(again, meta);
            }
        }
    }
}
