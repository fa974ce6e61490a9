//! Version edits: the records of the MANIFEST, in LevelDB's tagged encoding. Each edit says which
//! SSTs appear and disappear at which level, and advances the counters (log number, next file
//! number, last sequence, compaction pointers).

use crate::coding::{get_length_prefixed, get_varint32, get_varint64, put_length_prefixed, put_varint32, put_varint64};
use crate::error::{Error, Result};
use crate::key::SequenceNumber;

const COMPARATOR: u32 = 1;
const LOG_NUMBER: u32 = 2;
const NEXT_FILE_NUMBER: u32 = 3;
const LAST_SEQUENCE: u32 = 4;
const COMPACT_POINTER: u32 = 5;
const DELETED_FILE: u32 = 6;
const NEW_FILE: u32 = 7;
const PREV_LOG_NUMBER: u32 = 9;

/// The comparator name recorded in the MANIFEST; a database made with another ordering is refused.
pub const COMPARATOR_NAME: &str = "leveldb.BytewiseComparator";

/// An SST as a version edit names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewFile {
    pub level: usize,
    pub number: u64,
    pub size: u64,
    /// Smallest and largest internal keys.
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VersionEdit {
    pub comparator: Option<String>,
    pub log_number: Option<u64>,
    pub prev_log_number: Option<u64>,
    pub next_file_number: Option<u64>,
    pub last_sequence: Option<SequenceNumber>,
    pub compact_pointers: Vec<(usize, Vec<u8>)>,
    pub deleted_files: Vec<(usize, u64)>,
    pub new_files: Vec<NewFile>,
}

impl VersionEdit {
    pub fn add_file(&mut self, level: usize, number: u64, size: u64, smallest: Vec<u8>, largest: Vec<u8>) {
        self.new_files.push(NewFile { level, number, size, smallest, largest });
    }

    pub fn delete_file(&mut self, level: usize, number: u64) {
        self.deleted_files.push((level, number));
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(c) = &self.comparator {
            put_varint32(&mut out, COMPARATOR);
            put_length_prefixed(&mut out, c.as_bytes());
        }
        for (tag, v) in [
            (LOG_NUMBER, self.log_number),
            (PREV_LOG_NUMBER, self.prev_log_number),
            (NEXT_FILE_NUMBER, self.next_file_number),
            (LAST_SEQUENCE, self.last_sequence),
        ] {
            if let Some(v) = v {
                put_varint32(&mut out, tag);
                put_varint64(&mut out, v);
            }
        }
        for (level, key) in &self.compact_pointers {
            put_varint32(&mut out, COMPACT_POINTER);
            put_varint32(&mut out, *level as u32);
            put_length_prefixed(&mut out, key);
        }
        for (level, number) in &self.deleted_files {
            put_varint32(&mut out, DELETED_FILE);
            put_varint32(&mut out, *level as u32);
            put_varint64(&mut out, *number);
        }
        for f in &self.new_files {
            put_varint32(&mut out, NEW_FILE);
            put_varint32(&mut out, f.level as u32);
            put_varint64(&mut out, f.number);
            put_varint64(&mut out, f.size);
            put_length_prefixed(&mut out, &f.smallest);
            put_length_prefixed(&mut out, &f.largest);
        }
        out
    }

    /// Decodes an edit; `source` names the file and offset for the error.
    pub fn decode(src: &[u8], file: &str, offset: u64, num_levels: usize) -> Result<VersionEdit> {
        let bad = |what: &str| Error::corruption(file, offset, format!("version edit: {what}"));
        let mut e = VersionEdit::default();
        let mut rest = src;
        let varint64 = |rest: &mut &[u8], what: &str| -> Result<u64> {
            let (v, n) = get_varint64(rest).ok_or_else(|| bad(what))?;
            *rest = &rest[n..];
            Ok(v)
        };
        let level = |rest: &mut &[u8]| -> Result<usize> {
            let (v, n) = get_varint32(rest).ok_or_else(|| bad("level"))?;
            *rest = &rest[n..];
            if v as usize >= num_levels {
                return Err(bad(&format!("level {v} out of range")));
            }
            Ok(v as usize)
        };
        let bytes = |rest: &mut &[u8], what: &str| -> Result<Vec<u8>> {
            let (s, r) = get_length_prefixed(rest).ok_or_else(|| bad(what))?;
            *rest = r;
            Ok(s.to_vec())
        };
        while !rest.is_empty() {
            let (tag, n) = get_varint32(rest).ok_or_else(|| bad("tag"))?;
            rest = &rest[n..];
            match tag {
                COMPARATOR => {
                    let name = bytes(&mut rest, "comparator name")?;
                    e.comparator = Some(String::from_utf8(name).map_err(|_| bad("comparator name is not UTF-8"))?);
                }
                LOG_NUMBER => e.log_number = Some(varint64(&mut rest, "log number")?),
                PREV_LOG_NUMBER => e.prev_log_number = Some(varint64(&mut rest, "previous log number")?),
                NEXT_FILE_NUMBER => e.next_file_number = Some(varint64(&mut rest, "next file number")?),
                LAST_SEQUENCE => e.last_sequence = Some(varint64(&mut rest, "last sequence")?),
                COMPACT_POINTER => {
                    let l = level(&mut rest)?;
                    e.compact_pointers.push((l, bytes(&mut rest, "compaction pointer")?));
                }
                DELETED_FILE => {
                    let l = level(&mut rest)?;
                    e.deleted_files.push((l, varint64(&mut rest, "deleted file number")?));
                }
                NEW_FILE => {
                    let l = level(&mut rest)?;
                    let number = varint64(&mut rest, "file number")?;
                    let size = varint64(&mut rest, "file size")?;
                    let smallest = bytes(&mut rest, "smallest key")?;
                    let largest = bytes(&mut rest, "largest key")?;
                    if smallest.len() < 8 || largest.len() < 8 {
                        return Err(bad("file bounds are not internal keys"));
                    }
                    e.new_files.push(NewFile { level: l, number, size, smallest, largest });
                }
                other => return Err(bad(&format!("unknown tag {other}"))),
            }
        }
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    #[test]
    fn edits_round_trip_and_garbage_is_corruption() {
        let mut e = VersionEdit {
            comparator: Some(COMPARATOR_NAME.into()),
            log_number: Some(9),
            next_file_number: Some(20),
            last_sequence: Some(12345),
            ..Default::default()
        };
        e.compact_pointers.push((2, internal_key(b"m", 5, ValueKind::Value)));
        e.delete_file(1, 4);
        e.add_file(3, 17, 2 << 20, internal_key(b"a", 1, ValueKind::Value), internal_key(b"z", 2, ValueKind::Value));
        let bytes = e.encode();
        assert_eq!(VersionEdit::decode(&bytes, "MANIFEST-000001", 0, 7).unwrap(), e);
        let err = VersionEdit::decode(&bytes[..bytes.len() - 3], "MANIFEST-000001", 64, 7).unwrap_err();
        assert!(err.is_corruption() && err.to_string().contains("MANIFEST-000001"), "{err}");
        assert!(VersionEdit::decode(&[42], "M", 0, 7).is_err());
        assert!(VersionEdit::decode(&bytes, "M", 0, 3).is_err(), "level 3 is out of range with 3 levels");
    }
}
