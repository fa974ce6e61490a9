//! Block traces: the requests a storage trace recorded, read one at a time for replay on a
//! simulated SSD (as MQSim and SSDSim replay them).
//!
//! Contract:
//! - Two formats. `msr`: the MSR Cambridge / SNIA IOTTA CSV, `Timestamp,Hostname,DiskNumber,Type,
//!   Offset,Size[,ResponseTime]`, timestamps in Windows ticks of 100 ns, `Type` `Read` or `Write`,
//!   offset and size in bytes (a header line naming the columns is skipped). `blkparse`: the text
//!   that `blkparse` prints by default, `MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + COUNT
//!   [PROCESS]`, of which only `D` actions (requests issued to the device) are replayed; sectors
//!   are 512 B, `RWBS` with `D` is a discard, with `W` a write, with `R` a read; requests without
//!   sectors (flushes) are skipped, and so is the summary blkparse prints after the events.
//! - Times are nanoseconds from the trace's first request, which is at 0; a trace whose times
//!   go backwards keeps them (open-loop replay issues such a request at once).
//! - A line that is neither a request, a skipped action nor (blkparse) the summary is an error
//!   naming its line number and what was expected. Nothing is silently dropped but what the
//!   format's description above drops.

use std::io::BufRead;
use std::str::FromStr;

use crate::error::WorkloadError;
use crate::trace_lines::NumberedLines;

/// A trace file's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockTraceFormat {
    Msr,
    Blkparse,
}

impl BlockTraceFormat {
    pub const NAMES: &'static str = "msr, blkparse";

    pub fn name(self) -> &'static str {
        match self {
            BlockTraceFormat::Msr => "msr",
            BlockTraceFormat::Blkparse => "blkparse",
        }
    }
}

impl std::fmt::Display for BlockTraceFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BlockTraceFormat {
    type Err = WorkloadError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "msr" | "snia" | "csv" => Ok(BlockTraceFormat::Msr),
            "blkparse" | "blktrace" => Ok(BlockTraceFormat::Blkparse),
            _ => Err(WorkloadError::UnknownName {
                kind: "block trace format",
                name: s.to_string(),
                accepted: Self::NAMES.to_string(),
            }),
        }
    }
}

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockOp {
    Read,
    Write,
    Discard,
}

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRequest {
    /// The line of the trace it was read from (from 1).
    pub line: usize,
    /// Nanoseconds after the trace's first request.
    pub time_ns: u64,
    pub op: BlockOp,
    /// Byte offset on the device.
    pub offset: u64,
    /// Bytes (at least 1).
    pub size: u64,
}

/// The requests of a trace, in file order.
pub struct BlockTrace<R> {
    lines: NumberedLines<R>,
    format: BlockTraceFormat,
    /// The first request's time in the format's unit (MSR ticks, blkparse nanoseconds).
    first: Option<u64>,
    /// blkparse's summary has begun: the events are over.
    summary: bool,
}

impl<R: BufRead> BlockTrace<R> {
    pub fn new(reader: R, format: BlockTraceFormat) -> BlockTrace<R> {
        BlockTrace { lines: NumberedLines::new(reader), format, first: None, summary: false }
    }

    fn error(&self, message: impl Into<String>) -> WorkloadError {
        self.lines.error(message)
    }

    /// The request on `text`, `None` for a line the format skips.
    fn parse(&mut self, text: &str) -> Result<Option<(u64, BlockOp, u64, u64)>, WorkloadError> {
        let text = text.trim();
        if text.is_empty() || self.summary {
            return Ok(None);
        }
        match self.format {
            BlockTraceFormat::Msr => self.parse_msr(text),
            BlockTraceFormat::Blkparse => self.parse_blkparse(text),
        }
    }

    fn parse_msr(&self, text: &str) -> Result<Option<(u64, BlockOp, u64, u64)>, WorkloadError> {
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        if self.lines.line == 1 && fields[0].eq_ignore_ascii_case("timestamp") {
            return Ok(None);
        }
        if fields.len() < 6 {
            return Err(self.error(format!(
                "{} fields where MSR's CSV has 7 (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)",
                fields.len()
            )));
        }
        let number = |i: usize, what: &str| {
            fields[i].parse::<u64>().map_err(|_| self.error(format!("{what} '{}' is not a whole number", fields[i])))
        };
        let time = number(0, "timestamp")?;
        let op = match fields[3].to_ascii_lowercase().as_str() {
            "read" => BlockOp::Read,
            "write" => BlockOp::Write,
            other => return Err(self.error(format!("type '{other}' is not Read or Write"))),
        };
        let (offset, size) = (number(4, "offset")?, number(5, "size")?);
        if size == 0 {
            return Err(self.error("size 0: a request moves at least one byte"));
        }
        Ok(Some((time, op, offset, size)))
    }

    fn parse_blkparse(&mut self, text: &str) -> Result<Option<(u64, BlockOp, u64, u64)>, WorkloadError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        let is_device =
            |f: &str| f.split_once(',').is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok());
        if !is_device(fields[0]) {
            // blkparse ends with per-CPU and total summaries.
            if fields[0].starts_with("CPU") || fields[0] == "Total" {
                self.summary = true;
                return Ok(None);
            }
            return Err(self.error(format!(
                "'{}' is not a device (MAJOR,MINOR): expected blkparse's event lines, \
                 MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + COUNT",
                fields[0]
            )));
        }
        if fields.len() < 7 {
            return Err(self.error(format!("{} fields where a blkparse event has at least 7", fields.len())));
        }
        if fields[5] != "D" {
            return Ok(None);
        }
        let rwbs = fields[6];
        let op = if rwbs.contains('D') {
            BlockOp::Discard
        } else if rwbs.contains('W') {
            BlockOp::Write
        } else if rwbs.contains('R') {
            BlockOp::Read
        } else {
            return Ok(None);
        };
        // A request with no sectors (a flush) has no "SECTOR + COUNT".
        if fields.len() < 10 || fields[8] != "+" {
            return Ok(None);
        }
        let sector =
            fields[7].parse::<u64>().map_err(|_| self.error(format!("sector '{}' is not a number", fields[7])))?;
        let count =
            fields[9].parse::<u64>().map_err(|_| self.error(format!("count '{}' is not a number", fields[9])))?;
        if count == 0 {
            return Ok(None);
        }
        let time =
            seconds_to_ns(fields[3]).ok_or_else(|| self.error(format!("time '{}' is not seconds", fields[3])))?;
        Ok(Some((time, op, sector * 512, count * 512)))
    }
}

/// `S.FFFFFFFFF` seconds as nanoseconds, exactly.
fn seconds_to_ns(text: &str) -> Option<u64> {
    let (s, f) = text.split_once('.').unwrap_or((text, ""));
    if f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let frac: u64 = if f.is_empty() { 0 } else { f.parse::<u64>().ok()? * 10u64.pow(9 - f.len() as u32) };
    s.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(frac)
}

impl<R: BufRead> Iterator for BlockTrace<R> {
    type Item = Result<BlockRequest, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let text = match self.lines.next_line()? {
                Ok(t) => t,
                Err(e) => return Some(Err(e)),
            };
            match self.parse(&text) {
                Err(e) => return Some(Err(e)),
                Ok(None) => continue,
                Ok(Some((time, op, offset, size))) => {
                    let first = *self.first.get_or_insert(time);
                    let ticks = time.saturating_sub(first);
                    let time_ns = match self.format {
                        BlockTraceFormat::Msr => ticks.saturating_mul(100),
                        BlockTraceFormat::Blkparse => ticks,
                    };
                    return Some(Ok(BlockRequest { line: self.lines.line, time_ns, op, offset, size }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str, format: BlockTraceFormat) -> Result<Vec<BlockRequest>, WorkloadError> {
        BlockTrace::new(text.as_bytes(), format).collect()
    }

    /// Three requests in MSR Cambridge's layout (made up, in its form).
    const MSR: &str = "128166372003061629,usr,0,Read,7014609920,24576,41286\n\
                       128166372016382155,usr,0,Write,1317441536,8192,1963\n\
                       128166372026382245,usr,0,Write,1317449728,4096,1852\n";

    /// blkparse's default output: queue, dispatch and complete events, a flush, a discard, then
    /// the summary.
    const BLKPARSE: &str = "  8,0    1        1     0.000000000  4127  Q   W 2048 + 16 [fio]\n\
          8,0    1        2     0.000001500  4127  D   W 2048 + 16 [fio]\n\
          8,0    1        3     0.000210000     0  C   W 2048 + 16 [0]\n\
          8,0    0        4     0.001000000  4127  D  RA 4096 + 8 [fio]\n\
          8,0    0        5     0.002000000  4127  D  FN [fio]\n\
          8,0    0        6     0.003000000  4127  D   D 8192 + 64 [fstrim]\n\
        CPU0 (8,0):\n Reads Queued:           0,        0KiB\n";

    #[test]
    fn msr_requests_in_bytes_and_nanoseconds() {
        let r = all(MSR, BlockTraceFormat::Msr).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(r[0], BlockRequest { line: 1, time_ns: 0, op: BlockOp::Read, offset: 7_014_609_920, size: 24_576 });
        assert_eq!(r[1].time_ns, (128166372016382155 - 128166372003061629) * 100);
        assert_eq!((r[2].op, r[2].offset, r[2].size), (BlockOp::Write, 1_317_449_728, 4096));
        let header = format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n{MSR}");
        let with_header = all(&header, BlockTraceFormat::Msr).unwrap();
        assert_eq!(with_header.iter().map(|q| q.line).collect::<Vec<_>>(), [2, 3, 4]);
        assert_eq!(
            with_header.iter().map(|q| (q.time_ns, q.offset)).collect::<Vec<_>>(),
            r.iter().map(|q| (q.time_ns, q.offset)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn blkparse_replays_dispatches_only() {
        let r = all(BLKPARSE, BlockTraceFormat::Blkparse).unwrap();
        assert_eq!(
            r,
            [
                BlockRequest { line: 2, time_ns: 0, op: BlockOp::Write, offset: 2048 * 512, size: 16 * 512 },
                BlockRequest { line: 4, time_ns: 998_500, op: BlockOp::Read, offset: 4096 * 512, size: 8 * 512 },
                BlockRequest { line: 6, time_ns: 2_998_500, op: BlockOp::Discard, offset: 8192 * 512, size: 64 * 512 },
            ]
        );
    }

    #[test]
    fn a_malformed_line_is_named_by_its_number() {
        let bad = MSR.replace("Write,1317441536", "Wrote,1317441536");
        let e = all(&bad, BlockTraceFormat::Msr).unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("'wrote' is not Read or Write"), "{e}");
        let e = all("1,usr,0,Read,abc,4096,1\n", BlockTraceFormat::Msr).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("offset 'abc'"), "{e}");
        let e = all("1,usr,0\n", BlockTraceFormat::Msr).unwrap_err().to_string();
        assert!(e.contains("3 fields"), "{e}");
        let bad = BLKPARSE.replace("4096 + 8", "4096 + eight");
        let e = all(&bad, BlockTraceFormat::Blkparse).unwrap_err().to_string();
        assert!(e.contains("line 4") && e.contains("count 'eight'"), "{e}");
        let e = all("hello world\n", BlockTraceFormat::Blkparse).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("MAJOR,MINOR"), "{e}");
        assert!("tracefs".parse::<BlockTraceFormat>().unwrap_err().to_string().contains("msr, blkparse"));
    }

    #[test]
    fn seconds_are_exact() {
        assert_eq!(seconds_to_ns("1.5"), Some(1_500_000_000));
        assert_eq!(seconds_to_ns("0.000000001"), Some(1));
        assert_eq!(seconds_to_ns("2"), Some(2_000_000_000));
        assert_eq!(seconds_to_ns("1.0000000001"), None);
    }
}
