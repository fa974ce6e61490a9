//! Key-value traces: a recorded sequence of key-value operations, read one at a time as [`Op`]s
//! for replay on the engine or a key-value SSD.
//!
//! The format (ours, documented here and in the README), one operation per line:
//!
//! ```text
//! # a comment; blank lines are skipped
//! put,user1234,1024        # also insert, update, set: KEY and the value's size in bytes
//! get,user1234             # also read
//! scan,user1000,50         # seek to the first key >= KEY, then read up to 50 records
//! rmw,user1234,1024        # read-modify-write: read KEY, then put a value of this size
//! put,0x00ff10,16          # a key written 0x + hex is those bytes
//! ```
//!
//! Contract:
//! - Keys are the bytes between the commas (surrounding spaces trimmed), or with `0x` the bytes
//!   the hex digits give. A comment starts at `#`.
//! - A value's bytes come from the seed (printable, as YCSB's), or are zeros with
//!   [`ValueData::Zeros`]; the same trace and seed give the same ops on every machine.
//! - `put` and `update` are both a put: `put` is an [`Op::Insert`], `update` and `set` an
//!   [`Op::Update`] (reports count them apart, as for the generators).
//! - A line that is not one of these is an error naming its line number and the accepted forms;
//!   deletes are refused (the op stream has none), not skipped.

use std::io::BufRead;

use crate::error::WorkloadError;
use crate::op::Op;
use crate::rng::seeded;
use crate::trace_lines::NumberedLines;
use crate::value_data::ValueData;
use crate::ycsb::fill_random_printable;

/// The accepted forms of a line, for errors.
const FORMS: &str = "put|insert|update|set,KEY,VALUE_SIZE; get|read,KEY; scan,KEY,COUNT; rmw,KEY,VALUE_SIZE";

/// The largest value a trace line may ask for (the engine's largest).
const MAX_VALUE: u64 = 64 << 20;

/// The ops of a key-value trace, in file order.
pub struct KvTrace<R> {
    lines: NumberedLines<R>,
    values: ValueData,
    rng: rand_pcg::Pcg64Mcg,
}

impl<R: BufRead> KvTrace<R> {
    /// The trace on `reader`, its values' bytes from `seed` (or zeros).
    pub fn new(reader: R, values: ValueData, seed: u64) -> KvTrace<R> {
        KvTrace { lines: NumberedLines::new(reader), values, rng: seeded(seed) }
    }

    fn error(&self, message: impl Into<String>) -> WorkloadError {
        self.lines.error(message)
    }

    fn value(&mut self, size: u64) -> Vec<u8> {
        match self.values {
            ValueData::Zeros => vec![0; size as usize],
            ValueData::Generated => {
                let mut v = Vec::with_capacity(size as usize);
                fill_random_printable(&mut self.rng, size as usize, &mut v);
                v
            }
        }
    }

    fn parse(&mut self, text: &str) -> Result<Option<Op>, WorkloadError> {
        let text = text.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            return Ok(None);
        }
        let fields: Vec<&str> = text.split(',').map(str::trim).collect();
        let op = fields[0].to_ascii_lowercase();
        let want = |n: usize| {
            if fields.len() == n {
                Ok(())
            } else {
                Err(self.error(format!("{op} takes {} fields, got {}; accepted: {FORMS}", n, fields.len())))
            }
        };
        let number = |i: usize, what: &str| {
            fields[i].parse::<u64>().map_err(|_| self.error(format!("{what} '{}' is not a whole number", fields[i])))
        };
        let size = |i: usize| {
            let n = number(i, "value size")?;
            if n > MAX_VALUE {
                return Err(self.error(format!("value size {n} exceeds the engine's largest value, 64 MiB")));
            }
            Ok(n)
        };
        Ok(Some(match op.as_str() {
            "put" | "insert" | "update" | "set" | "rmw" => {
                want(3)?;
                let key = self.key(fields[1])?;
                let value = self.value(size(2)?);
                match op.as_str() {
                    "put" | "insert" => Op::Insert { key, value },
                    "rmw" => Op::ReadModifyWrite { key, value },
                    _ => Op::Update { key, value },
                }
            }
            "get" | "read" => {
                want(2)?;
                Op::Read { key: self.key(fields[1])? }
            }
            "scan" => {
                want(3)?;
                Op::Scan { start_key: self.key(fields[1])?, len: number(2, "count")? }
            }
            "delete" | "del" => return Err(self.error("deletes are not replayed (the op stream has none)")),
            other => return Err(self.error(format!("unknown operation '{other}'; accepted: {FORMS}"))),
        }))
    }

    /// `text`'s bytes, or with `0x` the bytes its hex digits give.
    fn key(&self, text: &str) -> Result<Vec<u8>, WorkloadError> {
        let key = match text.strip_prefix("0x") {
            None => text.as_bytes().to_vec(),
            Some(hex) if hex.len() % 2 == 0 => (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
                .collect::<Result<_, _>>()
                .map_err(|_| self.error(format!("key '{text}' is not hex after 0x")))?,
            Some(_) => return Err(self.error(format!("key '{text}' has an odd number of hex digits"))),
        };
        if key.is_empty() {
            return Err(self.error("empty key"));
        }
        Ok(key)
    }
}

impl<R: BufRead> Iterator for KvTrace<R> {
    type Item = Result<Op, WorkloadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let text = match self.lines.next_line()? {
                Ok(t) => t,
                Err(e) => return Some(Err(e)),
            };
            match self.parse(&text) {
                Ok(None) => continue,
                Ok(Some(op)) => return Some(Ok(op)),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(text: &str) -> Result<Vec<Op>, WorkloadError> {
        KvTrace::new(text.as_bytes(), ValueData::Zeros, 1).collect()
    }

    #[test]
    fn every_form_of_line() {
        let text = "# a trace\nput,user1,4\nget , user1\n\nupdate,user2,2 # a comment\nscan,user0,10\n\
                    rmw,user1,3\nput,0x00ff,1\n";
        assert_eq!(
            ops(text).unwrap(),
            [
                Op::Insert { key: b"user1".to_vec(), value: vec![0; 4] },
                Op::Read { key: b"user1".to_vec() },
                Op::Update { key: b"user2".to_vec(), value: vec![0; 2] },
                Op::Scan { start_key: b"user0".to_vec(), len: 10 },
                Op::ReadModifyWrite { key: b"user1".to_vec(), value: vec![0; 3] },
                Op::Insert { key: vec![0, 255], value: vec![0] },
            ]
        );
    }

    #[test]
    fn generated_values_depend_on_the_seed_alone() {
        let read = |seed| KvTrace::new("put,k,100\n".as_bytes(), ValueData::Generated, seed).next().unwrap().unwrap();
        assert_eq!(read(5), read(5));
        assert_ne!(read(5), read(6));
        let Op::Insert { value, .. } = read(5) else { panic!("a put") };
        assert!(value.len() == 100 && value.iter().all(|b| (b' '..=127).contains(b)));
    }

    #[test]
    fn a_malformed_line_is_named_by_its_number() {
        for (text, needle) in [
            ("get,a\nput,b\n", "line 2: put takes 3 fields, got 2"),
            ("get,a\nget,b\nerase,c\n", "line 3: unknown operation 'erase'"),
            ("put,a,big\n", "line 1: value size 'big'"),
            ("delete,a\n", "line 1: deletes are not replayed"),
            ("get,0xabc\n", "odd number of hex digits"),
            ("get,\n", "empty key"),
            ("put,a,100000000\n", "exceeds the engine's largest value"),
        ] {
            let e = ops(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }
}
