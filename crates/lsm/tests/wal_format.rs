//! The log format: round trips of records of any size, exact block edges, continuing a log.

use lsm::wal::{LogReader, LogWriter, ReadMode, BLOCK_SIZE, HEADER_SIZE};
use proptest::prelude::*;
use storage::{Fs, MemFs};

const PATH: &str = "000001.log";

fn record(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 131 + j * 7 + len) as u8).collect()
}

/// Writes `records` to a fresh log; returns the file system and each record's start offset.
fn write_log(records: &[Vec<u8>]) -> (MemFs, Vec<u64>) {
    let fs = MemFs::new();
    let mut w = LogWriter::new(fs.create(PATH).unwrap());
    let mut starts = Vec::new();
    for r in records {
        starts.push(w.len());
        w.add_record(r).unwrap();
    }
    w.sync().unwrap();
    (fs, starts)
}

fn read_log(fs: &MemFs, path: &str, mode: ReadMode) -> (Vec<Vec<u8>>, LogReader) {
    let mut r = LogReader::new(fs.open(path).unwrap(), mode);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push(rec);
    }
    (out, r)
}

fn assert_round_trip(sizes: &[usize]) {
    let records: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| record(i, n)).collect();
    let (fs, starts) = write_log(&records);
    for mode in [ReadMode::Paranoid, ReadMode::Lenient, ReadMode::PointInTime] {
        let (got, r) = read_log(&fs, PATH, mode);
        assert_eq!(got.len(), records.len(), "sizes {sizes:?}");
        assert!(got == records, "contents differ for sizes {sizes:?}");
        assert_eq!(r.dropped(), Default::default());
        assert!(r.problems().is_empty() && r.tail().is_none());
        if let Some(&last) = starts.last() {
            // The last record's offset is its first header (after any trailer).
            let leftover = BLOCK_SIZE as u64 - last % BLOCK_SIZE as u64;
            let header = if leftover < HEADER_SIZE as u64 { last + leftover } else { last };
            assert_eq!(r.last_record_offset(), header);
        }
    }
}

#[test]
fn empty_log_has_no_records() {
    assert_round_trip(&[]);
}

#[test]
fn block_edges_round_trip() {
    let full = BLOCK_SIZE - HEADER_SIZE;
    let cases: Vec<Vec<usize>> = vec![
        vec![0],
        vec![0, 0, 0],
        vec![full],
        vec![full - 1, 0, 5],
        vec![full + 1, 3],
        vec![full, full, full],
        // Ends 6 bytes before the block end: a 6-byte zero trailer, next record in block 2.
        vec![full - 6, 10],
        // Ends 7 bytes before: the next record starts with an empty FIRST fragment.
        vec![full - 7, 10],
        vec![full - 7, 0],
        vec![full - 8, 10],
        vec![2 * BLOCK_SIZE, 1, 3 * BLOCK_SIZE + 17],
        vec![100 * 1024, 100 * 1024],
    ];
    for sizes in cases {
        assert_round_trip(&sizes);
    }
}

#[test]
fn layout_matches_leveldb() {
    let full = BLOCK_SIZE - HEADER_SIZE;
    // A record ending 6 bytes before the end of block 0 leaves a zero trailer.
    let (fs, _) = write_log(&[record(0, full - 6), record(1, 10)]);
    let bytes = storage::read_all(&fs, PATH).unwrap();
    assert_eq!(&bytes[BLOCK_SIZE - 6..BLOCK_SIZE], &[0u8; 6]);
    assert_eq!(bytes[BLOCK_SIZE + 6], 1, "FULL record at the start of block 1");
    assert_eq!(bytes.len(), BLOCK_SIZE + HEADER_SIZE + 10);

    // Exactly 7 bytes left: an empty FIRST fills them, the LAST carries the data.
    let (fs, _) = write_log(&[record(0, full - 7), record(1, 10)]);
    let bytes = storage::read_all(&fs, PATH).unwrap();
    assert_eq!(&bytes[BLOCK_SIZE - 3..BLOCK_SIZE - 1], &[0, 0], "length 0");
    assert_eq!(bytes[BLOCK_SIZE - 1], 2, "FIRST");
    assert_eq!(bytes[BLOCK_SIZE + 6], 4, "LAST");

    // A record of exactly one block's payload is one FULL record.
    let (fs, _) = write_log(&[record(0, full)]);
    let bytes = storage::read_all(&fs, PATH).unwrap();
    assert_eq!(bytes.len(), BLOCK_SIZE);
    assert_eq!(bytes[6], 1);
    // One byte more: FIRST + LAST of one byte.
    let (fs, _) = write_log(&[record(0, full + 1)]);
    let bytes = storage::read_all(&fs, PATH).unwrap();
    assert_eq!((bytes[6], bytes[BLOCK_SIZE + 6]), (2, 4));
    assert_eq!(bytes.len(), BLOCK_SIZE + HEADER_SIZE + 1);
    // Checksum: masked crc32c over the type byte and the payload, little-endian.
    let (fs, _) = write_log(&[b"foo".to_vec()]);
    let bytes = storage::read_all(&fs, PATH).unwrap();
    let crc = lsm::crc::mask(lsm::crc::crc32c(b"\x01foo"));
    assert_eq!(&bytes[..4], &crc.to_le_bytes());
    assert_eq!(&bytes[4..7], &[3, 0, 1]);
}

#[test]
fn records_are_visible_after_add_without_sync() {
    let fs = MemFs::new();
    let mut w = LogWriter::new(fs.create(PATH).unwrap());
    w.add_record(b"visible").unwrap();
    let (got, _) = read_log(&fs, PATH, ReadMode::Paranoid);
    assert_eq!(got, vec![b"visible".to_vec()]);
}

#[test]
fn a_log_can_be_continued() {
    let fs = MemFs::new();
    let first: Vec<Vec<u8>> = (0..5).map(|i| record(i, 9000 + i)).collect();
    {
        let mut w = LogWriter::new(fs.create(PATH).unwrap());
        for r in &first {
            w.add_record(r).unwrap();
        }
        w.sync().unwrap();
    }
    let (got, r) = read_log(&fs, PATH, ReadMode::Paranoid);
    assert_eq!(got, first);
    assert_eq!(r.tail_dropped(), 0);
    let file = fs.open_append(PATH).unwrap();
    let len = file.len();
    let mut w = LogWriter::new_at(file, len);
    let second: Vec<Vec<u8>> = (5..10).map(|i| record(i, 7000 * i)).collect();
    for r in &second {
        w.add_record(r).unwrap();
    }
    w.sync().unwrap();
    let (got, _) = read_log(&fs, PATH, ReadMode::Paranoid);
    assert_eq!(got, [first, second].concat());
}

fn sizes() -> impl Strategy<Value = Vec<usize>> {
    let full = BLOCK_SIZE - HEADER_SIZE;
    let one = prop_oneof![
        4 => 0usize..200,
        2 => 0usize..102_400,
        1 => (full - 16)..(full + 16),
        1 => (2 * BLOCK_SIZE - 40)..(2 * BLOCK_SIZE + 8),
    ];
    prop::collection::vec(one, 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_sizes_round_trip(sizes in sizes()) {
        assert_round_trip(&sizes);
    }
}
