//! Crash tails versus corruption: truncation anywhere in the last record is a clean end; a
//! damaged record with valid data after it is corruption (paranoid: an error naming file and
//! offset; lenient: skipped and counted; point in time: a clean stop); crashes keep synced records
//! and leave a prefix of the rest.

use std::sync::Arc;

use lsm::wal::{DropReason, LogReader, LogWriter, ReadMode, BLOCK_SIZE, HEADER_SIZE};
use lsm::Error;
use proptest::prelude::*;
use storage::{FaultFs, Fs, IoClass, MemFs};

const PATH: &str = "000007.log";

fn record(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| (i * 131 + j * 7 + len) as u8).collect()
}

/// Writes `records`; returns the bytes and each record's [first header, end) extent.
fn encode(records: &[Vec<u8>]) -> (Vec<u8>, Vec<(u64, u64)>) {
    let fs = MemFs::new();
    let mut w = LogWriter::new(fs.create(PATH).unwrap());
    let mut extents = Vec::new();
    for r in records {
        let start = w.len();
        let leftover = BLOCK_SIZE as u64 - start % BLOCK_SIZE as u64;
        let header = if leftover < HEADER_SIZE as u64 { start + leftover } else { start };
        w.add_record(r).unwrap();
        extents.push((header, w.len()));
    }
    w.sync().unwrap();
    (storage::read_all(&fs, PATH).unwrap(), extents)
}

/// Reads `bytes` as a log; the records before the end or the first error, and the outcome.
fn read_bytes(bytes: &[u8], mode: ReadMode) -> (Vec<Vec<u8>>, Result<(), Error>, LogReader) {
    let fs = MemFs::new();
    storage::write_all(&fs, PATH, bytes, false).unwrap();
    let mut r = LogReader::new(fs.open(PATH).unwrap(), mode);
    let mut out = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push(rec),
            Ok(None) => return (out, Ok(()), r),
            Err(e) => return (out, Err(e), r),
        }
    }
}

/// Whether a payload byte (not a header, not a trailer) sits at `pos`, given the record extent.
fn payload_positions(start: u64, end: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut pos = start;
    while pos < end {
        let block_end = (pos / BLOCK_SIZE as u64 + 1) * BLOCK_SIZE as u64;
        let frag_end = block_end.min(end);
        out.extend(pos + HEADER_SIZE as u64..frag_end);
        pos = block_end;
    }
    out
}

#[test]
fn truncation_anywhere_in_the_last_record_is_a_clean_tail() {
    let full = BLOCK_SIZE - HEADER_SIZE;
    // Earlier records put the last one across a block boundary, after a 6-byte trailer case.
    for sizes in [vec![100, 2000, 30_000, 6000], vec![full - 6, 9000], vec![full - 7, 40], vec![10, full + 100]] {
        let records: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| record(i, n)).collect();
        let (bytes, extents) = encode(&records);
        let n = records.len();
        // From the end of the previous record (trailer included) to one byte short of the end.
        let from = extents[n - 2].1 as usize;
        for cut in from..bytes.len() {
            for mode in [ReadMode::Paranoid, ReadMode::Lenient, ReadMode::PointInTime] {
                let (got, res, r) = read_bytes(&bytes[..cut], mode);
                assert!(res.is_ok(), "cut at {cut}: {res:?}");
                assert_eq!(got.len(), n - 1, "cut at {cut} in {mode:?}");
                assert!(got[..] == records[..n - 1]);
                assert!(r.problems().is_empty(), "cut {cut}: {:?}", r.problems());
                assert_eq!(r.dropped().corrupt_bytes, 0);
                if let Some(t) = r.tail() {
                    assert!(t.offset >= from as u64);
                    assert_eq!(t.offset + t.bytes, cut as u64);
                    assert_eq!(r.tail_dropped(), t.bytes);
                } else {
                    // Only a cut inside the trailer before the record is no tail at all.
                    assert!(cut as u64 <= extents[n - 1].0, "cut {cut}");
                }
            }
        }
        // The whole log reads back.
        let (got, res, r) = read_bytes(&bytes, ReadMode::Paranoid);
        assert!(res.is_ok() && got == records && r.tail().is_none());
    }
}

#[test]
fn a_damaged_last_record_is_a_tail_too() {
    // A torn write may leave garbage rather than a short file: with nothing valid after it, the
    // last record's damage is the crash tail.
    let records: Vec<Vec<u8>> = (0..4).map(|i| record(i, 500 + 9000 * i)).collect();
    let (mut bytes, extents) = encode(&records);
    let (start, end) = extents[3];
    // Record 3 is a FIRST in block 0 and a LAST in block 1; damage in the LAST (header or
    // payload) leaves nothing valid after it.
    let last_frag = BLOCK_SIZE as u64;
    assert!(start < last_frag && end > last_frag + 7);
    for pos in [last_frag, last_frag + 4, last_frag + 9, end - 1] {
        bytes[pos as usize] ^= 0x40;
        for mode in [ReadMode::Paranoid, ReadMode::Lenient, ReadMode::PointInTime] {
            let (got, res, r) = read_bytes(&bytes, mode);
            assert!(res.is_ok(), "{res:?}");
            assert!(got[..] == records[..3]);
            assert_eq!(r.tail().map(|t| t.offset), Some(start));
            assert_eq!(r.tail_dropped(), end - start);
            assert!(r.problems().is_empty());
        }
        bytes[pos as usize] ^= 0x40;
    }
    // Damage to the FIRST while the LAST is intact: the record was written whole, so this is
    // corruption.
    bytes[start as usize + 20] ^= 0x40;
    let (got, res, _) = read_bytes(&bytes, ReadMode::Paranoid);
    assert!(got[..] == records[..3]);
    assert!(matches!(res, Err(Error::Corruption { offset, .. }) if offset == start));
    bytes[start as usize + 20] ^= 0x40;
    // A zero-filled (preallocated) end is a tail.
    let mut padded = bytes.clone();
    padded.extend_from_slice(&vec![0u8; 3 * BLOCK_SIZE + 100]);
    let (got, res, r) = read_bytes(&padded, ReadMode::Paranoid);
    assert!(res.is_ok() && got == records);
    assert_eq!(r.tail().map(|t| t.reason), Some(DropReason::ZeroedRegion));
}

#[test]
fn a_flipped_byte_in_a_middle_record_is_corruption() {
    let full = BLOCK_SIZE - HEADER_SIZE;
    let sizes = [300, 5000, full + 2000, 7, 2 * BLOCK_SIZE + 5, 40_000, 12, 800];
    let records: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| record(i, n)).collect();
    let (bytes, extents) = encode(&records);
    for k in 1..records.len() - 1 {
        let (start, end) = extents[k];
        let positions = payload_positions(start, end);
        for &pos in [positions[0], positions[positions.len() / 2], positions[positions.len() - 1]]
            .iter()
            .chain(&[start, start + 4])
        {
            let mut bad = bytes.clone();
            bad[pos as usize] ^= 0x01;

            let (got, res, r) = read_bytes(&bad, ReadMode::Paranoid);
            match res {
                Err(Error::Corruption { file, offset, what }) => {
                    assert_eq!(file, PATH);
                    assert!(
                        (start..end).contains(&offset),
                        "record {k} [{start}, {end}) flip at {pos}: offset {offset} ({what})"
                    );
                }
                other => panic!("record {k}, flip at {pos}: expected corruption, got {other:?}"),
            }
            assert!(got[..] == records[..k]);
            assert_eq!(r.problems().len(), 1);
            // The error is sticky.
            let mut r = r;
            assert!(r.next_record().is_err());

            let (got, res, r) = read_bytes(&bad, ReadMode::Lenient);
            assert!(res.is_ok());
            let expected: Vec<Vec<u8>> =
                records.iter().enumerate().filter(|&(i, _)| i != k).map(|(_, r)| r.clone()).collect();
            if pos >= start + HEADER_SIZE as u64 {
                // A payload flip loses exactly the damaged record.
                assert!(got == expected, "record {k}, flip at {pos}: got {} records", got.len());
            } else {
                // A damaged length may take the rest of its block; every record that starts in a
                // later block comes back.
                let block_end = (start / BLOCK_SIZE as u64 + 1) * BLOCK_SIZE as u64;
                for (i, rec) in records.iter().enumerate() {
                    if extents[i].0 >= block_end {
                        assert!(got.contains(rec), "record {i} lost after a flip at {pos}");
                    }
                }
                assert!(!got.contains(&records[k]));
            }
            let d = r.dropped();
            assert!(d.corrupt_regions >= 1 && d.corrupt_bytes >= end - start - 6);
            assert_eq!(d.tail_bytes, 0);
            assert!(r.problems().iter().all(|p| p.file == PATH));

            let (got, res, r) = read_bytes(&bad, ReadMode::PointInTime);
            assert!(res.is_ok());
            assert!(got[..] == records[..k], "point in time returns a prefix");
            assert_eq!(r.problems().len(), 1);
        }
    }
}

#[test]
fn orphan_fragments_and_unknown_types_are_corruption() {
    let full = BLOCK_SIZE - HEADER_SIZE;
    let records = vec![record(0, 10), record(1, full * 2), record(2, 10)];
    let (bytes, extents) = encode(&records);
    // Make the FIRST fragment of record 1 unreadable by zeroing its header: the MIDDLE and LAST
    // that follow are orphans.
    let mut bad = bytes.clone();
    let s = extents[1].0 as usize;
    bad[s..s + HEADER_SIZE].fill(0);
    let (got, res, r) = read_bytes(&bad, ReadMode::Lenient);
    assert!(res.is_ok());
    assert_eq!(got, vec![records[0].clone(), records[2].clone()]);
    let reasons: Vec<DropReason> = r.problems().iter().map(|p| p.reason).collect();
    assert_eq!(reasons[0], DropReason::ZeroedRegion);
    assert!(reasons[1..].iter().all(|&x| x == DropReason::MissingStart));

    // A well-formed record of an unknown type, even last, is reported and skipped.
    let mut unknown = bytes.clone();
    let payload = b"future";
    let crc = lsm::crc::mask(lsm::crc::crc32c(&[[9u8].as_slice(), payload].concat()));
    unknown.extend_from_slice(&crc.to_le_bytes());
    unknown.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    unknown.push(9);
    unknown.extend_from_slice(payload);
    let (got, res, _) = read_bytes(&unknown, ReadMode::Paranoid);
    assert!(got == records);
    assert!(matches!(res, Err(Error::Corruption { offset, .. }) if offset == bytes.len() as u64));
    let (got, res, r) = read_bytes(&unknown, ReadMode::Lenient);
    assert!(res.is_ok() && got == records);
    assert_eq!(r.problems()[0].reason, DropReason::UnknownType(9));
}

#[test]
fn memfs_crash_keeps_synced_records_and_a_prefix_of_the_rest() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for round in 0..20 {
        let fs = MemFs::new();
        let mut w = LogWriter::new(fs.create(PATH).unwrap());
        fs.sync_dir("").unwrap();
        let mut records = Vec::new();
        let mut synced = 0;
        for i in 0..40 {
            let len = match next() % 4 {
                0 => (next() % 100_000) as usize,
                _ => (next() % 300) as usize,
            };
            let r = record(round * 100 + i, len);
            w.add_record(&r).unwrap();
            records.push(r);
            if next() % 5 == 0 {
                w.sync().unwrap();
                synced = records.len();
            }
        }
        fs.crash();
        for mode in [ReadMode::Paranoid, ReadMode::Lenient] {
            let mut r = LogReader::new(fs.open(PATH).unwrap(), mode);
            let mut got = Vec::new();
            while let Some(rec) = r.next_record().unwrap() {
                got.push(rec);
            }
            assert!(got.len() >= synced, "round {round}: {} < {synced}", got.len());
            assert!(got[..] == records[..got.len()], "a prefix");
            assert!(r.problems().is_empty());
        }
    }
}

#[test]
fn torn_appends_lose_only_unacknowledged_records() {
    let mut torn = 0;
    for seed in 0..30u64 {
        let mem = MemFs::new();
        let fault = FaultFs::new(Arc::new(mem.clone()), seed);
        let fs: Arc<dyn Fs> = Arc::new(fault.clone());
        let mut w = LogWriter::new(fs.create(PATH).unwrap());
        fs.sync_dir("").unwrap();
        fault.set_probability(IoClass::Write, 0.02);
        fault.set_torn_writes(1.0);
        let mut acked = Vec::new();
        let mut attempted = Vec::new();
        for i in 0..200 {
            let r = record(i, (i * 977) % 20_000);
            attempted.push(r.clone());
            if w.add_record(&r).and_then(|()| w.sync()).is_err() {
                // The writer refuses everything after a failure.
                assert!(w.add_record(b"x").is_err());
                break;
            }
            acked.push(r);
        }
        fault.set_enabled(false);
        torn += fault.stats().torn_writes;
        drop(w);
        mem.crash();
        let mut r = LogReader::new(mem.open(PATH).unwrap(), ReadMode::Paranoid);
        let mut got = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            got.push(rec);
        }
        assert!(got.len() >= acked.len(), "seed {seed}: acknowledged records lost");
        assert!(got[..] == attempted[..got.len()]);
    }
    assert!(torn > 10, "the test must tear writes ({torn})");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any single flipped payload byte of a record that is not the last: paranoid names the file
    /// and an offset inside the damaged record; lenient returns every other record.
    #[test]
    fn any_payload_flip_is_found(
        sizes in prop::collection::vec(prop_oneof![0usize..300, 1usize..70_000], 3..8),
        k_pick in any::<prop::sample::Index>(),
        pos_pick in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let records: Vec<Vec<u8>> = sizes.iter().enumerate().map(|(i, &n)| record(i, n)).collect();
        let (bytes, extents) = encode(&records);
        // A non-empty record that is not the last.
        let candidates: Vec<usize> = (0..records.len() - 1).filter(|&i| !records[i].is_empty()).collect();
        prop_assume!(!candidates.is_empty());
        let k = candidates[k_pick.index(candidates.len())];
        let (start, end) = extents[k];
        let positions = payload_positions(start, end);
        let pos = positions[pos_pick.index(positions.len())];
        let mut bad = bytes.clone();
        bad[pos as usize] ^= 1 << bit;

        let (got, res, _) = read_bytes(&bad, ReadMode::Paranoid);
        let is_corruption_in_k = matches!(
            &res,
            Err(Error::Corruption { file, offset, .. }) if file == PATH && (start..end).contains(offset)
        );
        prop_assert!(is_corruption_in_k, "{:?}", res);
        prop_assert!(got[..] == records[..k]);

        let (got, res, r) = read_bytes(&bad, ReadMode::Lenient);
        prop_assert!(res.is_ok());
        let expected: Vec<Vec<u8>> =
            records.iter().enumerate().filter(|&(i, _)| i != k).map(|(_, r)| r.clone()).collect();
        prop_assert!(got == expected);
        prop_assert!(r.dropped().corrupt_bytes >= end - start - 6);
    }
}
