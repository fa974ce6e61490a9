//! RocksDB's query traces (`DB::StartTrace`, db_bench's `--trace_file`), read as [`Op`]s for
//! replay on the engine or a key-value SSD, as the `op,key,size` traces of [`crate::kv_trace`]
//! are.
//!
//! The file is a sequence of records: a timestamp (fixed64, microseconds), a type (one byte), a
//! payload length (fixed32) and the payload; integers little-endian, as RocksDB's `PutFixed*`
//! writes them. The first record is the header (type 1, a payload starting with the magic
//! `feedcafedeadbeef`, then `Trace Version: M.m` and `RocksDB Version: M.m`, tab separated); the
//! last may be the footer (type 2). Query records of trace version 0.2 and later start with a
//! payload map (fixed64) whose set bits, lowest first, say which fields follow; earlier versions
//! have fixed fields. Strings are length-prefixed (varint32).
//!
//! Contract:
//! - A write (type 3) is a WriteBatch: each put in it is an [`Op::Insert`] of its key and value, in
//!   batch order; log data, no-ops and transaction markers carry no data and are skipped. A
//!   delete, merge, range delete, blob index, wide-column entity or timed put has no counterpart
//!   in the op stream and is an error, not skipped.
//! - A get (type 4) is an [`Op::Read`]; a multi-get (type 13) a read per key, in order.
//! - An iterator seek (type 5) is an [`Op::Scan`] of one record: the trace records the seek,
//!   not the `Next` calls after it. A seek-for-prev (type 6) has no counterpart and is an error.
//! - Every column family but the default (0) is an error: the engine has one key space.
//! - Values are the trace's own bytes, or zeros of their length with [`ValueData::Zeros`].
//! - Timestamps are read and not used: replay is closed loop, one op after another.
//! - A malformed record is an error naming its number (the header is record 1) and its byte
//!   offset; a file that ends inside a record is one too.

use std::collections::VecDeque;
use std::io::Read;

use crate::error::WorkloadError;
use crate::op::Op;
use crate::value_data::ValueData;

/// The magic at the start of the header's payload.
pub const MAGIC: &[u8] = b"feedcafedeadbeef";

const BEGIN: u8 = 1;
const END: u8 = 2;
const WRITE: u8 = 3;
const GET: u8 = 4;
const SEEK: u8 = 5;
const SEEK_FOR_PREV: u8 = 6;
const MULTI_GET: u8 = 13;

/// Bits of a query payload map (RocksDB's `TracePayloadType`).
const WRITE_BATCH_DATA: u32 = 1;
const GET_CF: u32 = 2;
const GET_KEY: u32 = 3;
const ITER_CF: u32 = 4;
const ITER_KEY: u32 = 5;
const ITER_LOWER: u32 = 6;
const ITER_UPPER: u32 = 7;
const MULTI_GET_SIZE: u32 = 8;
const MULTI_GET_CFS: u32 = 9;
const MULTI_GET_KEYS: u32 = 10;

/// Bytes of a WriteBatch's header: sequence number (fixed64) and count (fixed32).
const BATCH_HEADER: usize = 12;

/// Whether `start` (a file's first bytes) is a RocksDB trace: a record of type "begin" whose
/// payload starts with the magic.
pub fn is_rocksdb_trace(start: &[u8]) -> bool {
    start.len() >= 13 + MAGIC.len() && start[8] == BEGIN && start[13..].starts_with(MAGIC)
}

/// The ops of a RocksDB query trace, in file order.
pub struct RocksDbTrace<R> {
    reader: R,
    values: ValueData,
    /// The trace format's version (`0.2` is 2), from the header.
    version: u32,
    /// The number of the record last read (the header is 1), and the byte offset it started at.
    record: usize,
    offset: u64,
    next_offset: u64,
    /// Ops of the record last read not yet returned (a batch or a multi-get gives several).
    pending: VecDeque<Op>,
    done: bool,
}

impl<R: Read> RocksDbTrace<R> {
    /// The trace on `reader`; its header is read and checked here.
    pub fn new(reader: R, values: ValueData) -> Result<RocksDbTrace<R>, WorkloadError> {
        let mut t = RocksDbTrace {
            reader,
            values,
            version: 0,
            record: 0,
            offset: 0,
            next_offset: 0,
            pending: VecDeque::new(),
            done: false,
        };
        let first = match t.read_record() {
            Ok(Some(record)) => record,
            Ok(None) => return Err(t.error("an empty file, not a RocksDB trace")),
            Err(WorkloadError::TraceRecord { message, .. }) => {
                return Err(t.error(format!("not a RocksDB trace: {message}")))
            }
            Err(e) => return Err(e),
        };
        let (kind, payload) = first;
        if kind != BEGIN || !payload.starts_with(MAGIC) {
            return Err(t.error("not a RocksDB trace: the header's magic feedcafedeadbeef is missing"));
        }
        t.version = t.header_version(&payload)?;
        Ok(t)
    }

    fn error(&self, message: impl Into<String>) -> WorkloadError {
        WorkloadError::TraceRecord { record: self.record, offset: self.offset, message: message.into() }
    }

    /// `Trace Version: M.m` of the header, as RocksDB reads it (its digits: 0.2 is 2).
    fn header_version(&self, payload: &[u8]) -> Result<u32, WorkloadError> {
        let text = String::from_utf8_lossy(payload);
        let field = text.split('\t').find_map(|f| f.strip_prefix("Trace Version: "));
        let digits = field.filter(|v| v.matches('.').count() == 1 && v.chars().all(|c| c == '.' || c.is_ascii_digit()));
        let v = digits.ok_or_else(|| self.error("the header has no 'Trace Version: M.m'"))?;
        v.chars()
            .filter(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .map_err(|_| self.error("a bad trace version"))
    }

    /// The next record's type and payload; `None` at the end of the file.
    fn read_record(&mut self) -> Result<Option<(u8, Vec<u8>)>, WorkloadError> {
        self.record += 1;
        self.offset = self.next_offset;
        let mut meta = [0u8; 13];
        let got = read_full(&mut self.reader, &mut meta).map_err(|e| self.error(format!("cannot read: {e}")))?;
        match got {
            0 => return Ok(None),
            13 => {}
            n => return Err(self.error(format!("the file ends {n} bytes into a record's 13-byte metadata"))),
        }
        let len = u32::from_le_bytes(meta[9..13].try_into().expect("4 bytes")) as usize;
        let mut payload = vec![0; len];
        let got = read_full(&mut self.reader, &mut payload).map_err(|e| self.error(format!("cannot read: {e}")))?;
        if got < len {
            return Err(self.error(format!("the file ends {got} bytes into a payload of {len}")));
        }
        self.next_offset = self.offset + 13 + len as u64;
        Ok(Some((meta[8], payload)))
    }

    /// The ops of one query record.
    fn decode(&mut self, kind: u8, payload: &[u8]) -> Result<(), WorkloadError> {
        let mut p = Payload { buf: payload };
        let bad = |what: &str| format!("a malformed {what} record");
        match kind {
            WRITE => {
                let rep = if self.version < 2 {
                    payload
                } else {
                    let mut rep: &[u8] = &[];
                    for bit in p.map().ok_or_else(|| self.error(bad("write")))? {
                        match bit {
                            WRITE_BATCH_DATA => rep = p.string().ok_or_else(|| self.error(bad("write")))?,
                            b => return Err(self.error(format!("write record: unknown payload field {b}"))),
                        }
                    }
                    rep
                };
                self.write_batch(rep)
            }
            GET => {
                let key = self.key_of(&mut p, "get", (GET_CF, GET_KEY), &[])?;
                self.push(Op::Read { key })
            }
            SEEK => {
                // The iterator's bounds limit its Next calls, which the trace does not hold.
                let key = self.key_of(&mut p, "seek", (ITER_CF, ITER_KEY), &[ITER_LOWER, ITER_UPPER])?;
                self.push(Op::Scan { start_key: key, len: 1 })
            }
            SEEK_FOR_PREV => Err(self.error("SeekForPrev has no counterpart in the op stream (scans go forward)")),
            MULTI_GET => {
                if self.version < 2 {
                    return Err(self.error("MultiGet records need trace version 0.2 or later"));
                }
                let (mut n, mut cfs, mut keys) = (None, None, None);
                for bit in p.map().ok_or_else(|| self.error(bad("multi-get")))? {
                    match bit {
                        MULTI_GET_SIZE => n = p.fixed32(),
                        MULTI_GET_CFS => cfs = p.string(),
                        MULTI_GET_KEYS => keys = p.string(),
                        b => return Err(self.error(format!("multi-get record: unknown payload field {b}"))),
                    }
                }
                let (n, cfs, keys) = match (n, cfs, keys) {
                    (Some(n), Some(c), Some(k)) if n > 0 => (n, c, k),
                    _ => return Err(self.error(bad("multi-get"))),
                };
                let (mut cfs, mut keys) = (Payload { buf: cfs }, Payload { buf: keys });
                for _ in 0..n {
                    let (cf, key) = cfs.fixed32().zip(keys.string()).ok_or_else(|| self.error(bad("multi-get")))?;
                    self.default_cf(cf)?;
                    self.push(Op::Read { key: key.to_vec() })?;
                }
                Ok(())
            }
            7..=12 => {
                Err(self.error(format!("record type {kind} is a block cache or I/O trace's, not a query trace's")))
            }
            k => Err(self.error(format!("unknown record type {k}"))),
        }
    }

    /// The key of a get or seek record (`what`), in the default column family: fixed fields
    /// before trace version 0.2, else the payload map's `(cf, key)` bits, with the strings of the
    /// `skipped` bits read past.
    fn key_of(
        &self,
        p: &mut Payload<'_>,
        what: &str,
        (cf_bit, key_bit): (u32, u32),
        skipped: &[u32],
    ) -> Result<Vec<u8>, WorkloadError> {
        let bad = || self.error(format!("a malformed {what} record"));
        let (cf, key) = if self.version < 2 {
            (p.fixed32(), p.string())
        } else {
            let (mut cf, mut key) = (Some(0), None);
            for bit in p.map().ok_or_else(bad)? {
                match bit {
                    b if b == cf_bit => cf = p.fixed32(),
                    b if b == key_bit => key = p.string(),
                    b if skipped.contains(&b) => {
                        p.string().ok_or_else(bad)?;
                    }
                    b => return Err(self.error(format!("{what} record: unknown payload field {b}"))),
                }
            }
            (cf, key)
        };
        let (cf, key) = cf.zip(key).ok_or_else(bad)?;
        self.default_cf(cf)?;
        Ok(key.to_vec())
    }

    /// The puts of a WriteBatch's representation.
    fn write_batch(&mut self, rep: &[u8]) -> Result<(), WorkloadError> {
        if rep.len() < BATCH_HEADER {
            return Err(self.error(format!("a WriteBatch of {} bytes, shorter than its 12-byte header", rep.len())));
        }
        let mut p = Payload { buf: &rep[BATCH_HEADER..] };
        let bad = |tag: u8| format!("a malformed WriteBatch entry (tag {tag:#x})");
        while let Some(tag) = p.byte() {
            match tag {
                // Put, and Put in a column family.
                0x1 | 0x5 => {
                    let cf = if tag == 0x5 { p.varint32() } else { Some(0) };
                    let (cf, (key, value)) = cf.zip(p.string().zip(p.string())).ok_or_else(|| self.error(bad(tag)))?;
                    self.default_cf(cf)?;
                    let value = match self.values {
                        ValueData::Zeros => vec![0; value.len()],
                        ValueData::Generated => value.to_vec(),
                    };
                    self.push(Op::Insert { key: key.to_vec(), value })?;
                }
                // Log data, and the end or commit or rollback of a prepared transaction: a string.
                0x3 | 0xA | 0xB | 0xC => {
                    p.string().ok_or_else(|| self.error(bad(tag)))?;
                }
                // A commit with a timestamp: the timestamp, then the transaction id.
                0x15 => {
                    p.string().and_then(|_| p.string()).ok_or_else(|| self.error(bad(tag)))?;
                }
                // No-op and the beginnings of prepared transactions: nothing follows.
                0x9 | 0xD | 0x12 | 0x13 => {}
                0x0 | 0x4 | 0x7 | 0x8 | 0x14 => {
                    return Err(self.error("deletes are not replayed (the op stream has none)"))
                }
                0x2 | 0x6 => return Err(self.error("merges are not replayed (the engine has no merge operator)")),
                0xE | 0xF => return Err(self.error("range deletes are not replayed (the op stream has none)")),
                0x10 | 0x11 => return Err(self.error("blob indexes (BlobDB) are not replayed")),
                0x16 | 0x17 => return Err(self.error("wide-column entities are not replayed")),
                0x18 | 0x19 => return Err(self.error("timed puts (a value with its write time) are not replayed")),
                t => return Err(self.error(format!("unknown WriteBatch tag {t:#x}"))),
            }
        }
        Ok(())
    }

    fn default_cf(&self, cf: u32) -> Result<(), WorkloadError> {
        match cf {
            0 => Ok(()),
            cf => Err(self.error(format!("column family {cf}: the engine has one key space (the default, 0)"))),
        }
    }

    fn push(&mut self, op: Op) -> Result<(), WorkloadError> {
        let empty = match &op {
            Op::Insert { key, .. } | Op::Read { key } => key.is_empty(),
            _ => false,
        };
        if empty {
            return Err(self.error("an empty key"));
        }
        self.pending.push_back(op);
        Ok(())
    }
}

impl<R: Read> Iterator for RocksDbTrace<R> {
    type Item = Result<Op, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(op) = self.pending.pop_front() {
                return Some(Ok(op));
            }
            if self.done {
                return None;
            }
            let step = match self.read_record() {
                Ok(None) => Ok(false),
                Ok(Some((END, _))) => Ok(false),
                Ok(Some((BEGIN, _))) => Err(self.error("a second header")),
                Ok(Some((kind, payload))) => self.decode(kind, &payload).map(|()| true),
                Err(e) => Err(e),
            };
            match step {
                Ok(true) => {}
                Ok(false) => self.done = true,
                Err(e) => {
                    self.done = true;
                    self.pending.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}

/// Reads until `buf` is full or the reader ends; the bytes read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A payload being decoded, RocksDB's `Get*` functions over a slice; `None` when it ends early.
struct Payload<'a> {
    buf: &'a [u8],
}

impl<'a> Payload<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        (self.buf.len() >= n).then(|| {
            let (head, rest) = self.buf.split_at(n);
            self.buf = rest;
            head
        })
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    fn fixed32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn varint32(&mut self) -> Option<u32> {
        let mut v: u32 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            v |= ((b & 0x7f) as u32) << shift;
            if b < 0x80 {
                return Some(v);
            }
        }
        None
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let n = self.varint32()? as usize;
        self.take(n)
    }

    /// The set bits of a payload map (fixed64), lowest first.
    fn map(&mut self) -> Option<Vec<u32>> {
        let m = u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes"));
        Some((0..64).filter(|b| m & (1 << b) != 0).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A trace file as RocksDB's tracer writes one (version 0.2), from its records' types and
    /// payloads; for the unit tests. The integration test reads a trace RocksDB wrote.
    fn file(records: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        let header =
            [MAGIC, b"\tTrace Version: 0.2\tRocksDB Version: 11.9\tFormat: Timestamp OpType Payload\n"].concat();
        for (i, (kind, payload)) in std::iter::once(&(BEGIN, header)).chain(records).enumerate() {
            out.extend_from_slice(&(1000 + i as u64).to_le_bytes());
            out.push(*kind);
            out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            out.extend_from_slice(payload);
        }
        out
    }

    fn string(s: &[u8]) -> Vec<u8> {
        assert!(s.len() < 128);
        [&[s.len() as u8][..], s].concat()
    }

    fn map(bits: &[u32]) -> Vec<u8> {
        bits.iter().fold(0u64, |m, b| m | 1 << b).to_le_bytes().to_vec()
    }

    fn batch(entries: &[u8]) -> Vec<u8> {
        [map(&[WRITE_BATCH_DATA]), string(&[&[0u8; 12][..], entries].concat())].concat()
    }

    fn ops(bytes: &[u8]) -> Result<Vec<Op>, WorkloadError> {
        RocksDbTrace::new(bytes, ValueData::Generated)?.collect()
    }

    #[test]
    fn every_query_record() {
        let put = |k: &[u8], v: &[u8]| [&[0x1u8][..], &string(k), &string(v)].concat();
        let records = [
            (WRITE, batch(&[put(b"k1", b"v1"), vec![0xD], put(b"k2", b"value2")].concat())),
            (GET, [map(&[GET_CF, GET_KEY]), 0u32.to_le_bytes().to_vec(), string(b"k1")].concat()),
            (SEEK, [map(&[ITER_CF, ITER_KEY, ITER_UPPER]), vec![0; 4], string(b"k0"), string(b"k9")].concat()),
            (
                MULTI_GET,
                [
                    map(&[MULTI_GET_SIZE, MULTI_GET_CFS, MULTI_GET_KEYS]),
                    2u32.to_le_bytes().to_vec(),
                    string(&[0; 8]),
                    string(&[string(b"k1"), string(b"k2")].concat()),
                ]
                .concat(),
            ),
            (END, vec![]),
        ];
        assert_eq!(
            ops(&file(&records)).unwrap(),
            [
                Op::Insert { key: b"k1".to_vec(), value: b"v1".to_vec() },
                Op::Insert { key: b"k2".to_vec(), value: b"value2".to_vec() },
                Op::Read { key: b"k1".to_vec() },
                Op::Scan { start_key: b"k0".to_vec(), len: 1 },
                Op::Read { key: b"k1".to_vec() },
                Op::Read { key: b"k2".to_vec() },
            ]
        );
        assert!(is_rocksdb_trace(&file(&records)));
        assert!(!is_rocksdb_trace(b"put,k,1\n"));
    }

    #[test]
    fn what_has_no_counterpart_is_an_error_naming_the_record() {
        let get_cf1 = [map(&[GET_CF, GET_KEY]), 1u32.to_le_bytes().to_vec(), string(b"k")].concat();
        for (records, needle) in [
            (vec![(WRITE, batch(&[&[0x0u8][..], &string(b"k")].concat()))], "record 2 (byte 104): deletes"),
            (vec![(GET, vec![0; 3])], "record 2 (byte 104): a malformed get"),
            (vec![(WRITE, batch(&[])), (GET, get_cf1)], "record 3 (byte 138): column family 1"),
            (vec![(SEEK_FOR_PREV, vec![])], "SeekForPrev"),
            (vec![(9, vec![])], "block cache or I/O trace"),
            (vec![(WRITE, batch(&[0x2, 1, b'k', 1, b'v']))], "merges"),
        ] {
            let e = ops(&file(&records)).unwrap_err().to_string();
            assert!(e.contains(needle), "{needle}: {e}");
        }
        let mut cut = file(&[(GET, [map(&[GET_KEY]), string(b"k")].concat())]);
        cut.truncate(cut.len() - 2);
        assert!(ops(&cut)
            .unwrap_err()
            .to_string()
            .contains("record 2 (byte 104): the file ends 8 bytes into a payload of 10"));
        assert!(RocksDbTrace::new(&b"put,k,1\n"[..], ValueData::Zeros)
            .err()
            .unwrap()
            .to_string()
            .contains("not a RocksDB trace"));
    }
}
