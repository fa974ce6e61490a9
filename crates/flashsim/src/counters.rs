//! Exact accounting of what the host asked for and what the NAND did.
//!
//! Counters are raw event counts; [`Counters::report`] turns them into the names every JSON result
//! of the project uses (DESIGN.md: `flash_program_bytes`, `flash_read_bytes`, `erases`,
//! `gc_copied_pages`, `copybacks`, `remapped_pages`, ...). GC relocations count as NAND programs;
//! remaps program nothing and only count as `remapped_pages`.

use serde::Serialize;

/// Raw event counts of one device. `Copy` so that a window of a run is `later.delta(&earlier)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    /// Pages the host asked to write (including pages written without data).
    pub host_write_pages: u64,
    /// Pages the host asked to read.
    pub host_read_pages: u64,
    /// Pages the host trimmed.
    pub host_trim_pages: u64,
    /// Pages the host remapped (destination pages that now share a source page).
    pub remapped_pages: u64,
    /// NAND page programs of any cause: host data, GC relocation, mapping (translation) pages.
    pub nand_programs: u64,
    /// NAND page reads of any cause.
    pub nand_reads: u64,
    /// Block erases.
    pub erases: u64,
    /// Valid pages GC relocated (by copyback or by read + program).
    pub gc_copied_pages: u64,
    /// Relocations done by copyback (no channel transfer); a subset of `gc_copied_pages`.
    pub copybacks: u64,
    /// Victim blocks collected.
    pub gc_runs: u64,
    /// GC runs the host had to wait for (free blocks exhausted).
    pub foreground_gc_runs: u64,
    /// Multi-plane commands issued (each covers two or more planes).
    pub multi_plane_ops: u64,
    /// DFTL: translation page reads on mapping-cache misses (and read-modify-write on write back).
    pub translation_reads: u64,
    /// DFTL: translation page programs when dirty cached entries are written back.
    pub translation_writes: u64,
    /// DFTL: mapping-cache lookups that hit.
    pub cmt_hits: u64,
    /// DFTL: mapping-cache lookups that missed.
    pub cmt_misses: u64,
    /// Power cuts survived (each followed by a rebuild of the mapping).
    pub power_cuts: u64,
}

impl Counters {
    /// What happened between `earlier` and `self`.
    pub fn delta(&self, earlier: &Counters) -> Counters {
        Counters {
            host_write_pages: self.host_write_pages - earlier.host_write_pages,
            host_read_pages: self.host_read_pages - earlier.host_read_pages,
            host_trim_pages: self.host_trim_pages - earlier.host_trim_pages,
            remapped_pages: self.remapped_pages - earlier.remapped_pages,
            nand_programs: self.nand_programs - earlier.nand_programs,
            nand_reads: self.nand_reads - earlier.nand_reads,
            erases: self.erases - earlier.erases,
            gc_copied_pages: self.gc_copied_pages - earlier.gc_copied_pages,
            copybacks: self.copybacks - earlier.copybacks,
            gc_runs: self.gc_runs - earlier.gc_runs,
            foreground_gc_runs: self.foreground_gc_runs - earlier.foreground_gc_runs,
            multi_plane_ops: self.multi_plane_ops - earlier.multi_plane_ops,
            translation_reads: self.translation_reads - earlier.translation_reads,
            translation_writes: self.translation_writes - earlier.translation_writes,
            cmt_hits: self.cmt_hits - earlier.cmt_hits,
            cmt_misses: self.cmt_misses - earlier.cmt_misses,
            power_cuts: self.power_cuts - earlier.power_cuts,
        }
    }

    /// NAND operations of every kind (reads, programs, erases): the simulator's unit of work.
    pub fn nand_ops(&self) -> u64 {
        self.nand_reads + self.nand_programs + self.erases
    }

    /// NAND programs per host page written; `None` before the host wrote anything.
    pub fn write_amplification(&self) -> Option<f64> {
        (self.host_write_pages > 0).then(|| self.nand_programs as f64 / self.host_write_pages as f64)
    }

    /// The counters under the project's accounting names, in bytes where the names say so.
    pub fn report(&self, page_size: u32) -> FlashReport {
        let ps = page_size as u64;
        FlashReport {
            host_write_bytes: self.host_write_pages * ps,
            host_read_bytes: self.host_read_pages * ps,
            host_trim_bytes: self.host_trim_pages * ps,
            flash_program_bytes: self.nand_programs * ps,
            flash_read_bytes: self.nand_reads * ps,
            erases: self.erases,
            gc_copied_pages: self.gc_copied_pages,
            copybacks: self.copybacks,
            remapped_pages: self.remapped_pages,
            device_write_amplification: self.write_amplification(),
            counters: *self,
        }
    }
}

/// Device accounting under the project's names.
#[derive(Clone, Debug, Serialize)]
pub struct FlashReport {
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub host_trim_bytes: u64,
    /// NAND page programs x page size, GC relocations included, remaps excluded.
    pub flash_program_bytes: u64,
    pub flash_read_bytes: u64,
    pub erases: u64,
    pub gc_copied_pages: u64,
    pub copybacks: u64,
    pub remapped_pages: u64,
    /// NAND programs / host page writes (the device's own amplification, below any file system).
    pub device_write_amplification: Option<f64>,
    pub counters: Counters,
}
