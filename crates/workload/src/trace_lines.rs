//! The lines of a trace file, numbered: what the trace readers ([`crate::block_trace`],
//! [`crate::kv_trace`]) parse, and the number their errors name.

use std::io::{BufRead, Lines};

use crate::error::WorkloadError;

/// A reader's lines, counted from 1.
pub(crate) struct NumberedLines<R> {
    lines: Lines<R>,
    /// The number of the line last read (0 before the first).
    pub line: usize,
}

impl<R: BufRead> NumberedLines<R> {
    pub fn new(reader: R) -> NumberedLines<R> {
        NumberedLines { lines: reader.lines(), line: 0 }
    }

    /// An error about the line last read.
    pub fn error(&self, message: impl Into<String>) -> WorkloadError {
        WorkloadError::TraceLine { line: self.line, message: message.into() }
    }

    /// The next line, a read error as an error at its line; `None` at the end.
    pub fn next_line(&mut self) -> Option<Result<String, WorkloadError>> {
        let read = self.lines.next()?;
        self.line += 1;
        Some(read.map_err(|e| self.error(format!("cannot read: {e}"))))
    }
}
