//! Engine statistics in the shape of RocksDB's "Compaction Stats": per level, files and bytes now,
//! and bytes read, written, moved and cloned by the flushes and compactions that wrote into it;
//! plus stall counts and times and the user bytes that write amplification is measured against.
//!
//! Bytes here are what the engine wrote into files (logical). The device-level accounting (host
//! writes in whole pages, flash programs) comes from the file system and device below.

use super::RecoveryReport;
use crate::cache::CacheStats;
use crate::compaction::remapcom::{ratio, UdbStats};
use crate::cpu::CpuCounts;
use crate::version::Version;

/// Activity of one level, as the output level of flushes and compactions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelStats {
    pub files: usize,
    pub bytes: u64,
    pub compactions: u64,
    /// Input bytes taken from the level above (the compaction's input level).
    pub bytes_read_input_level: u64,
    /// Input bytes taken from this level.
    pub bytes_read_output_level: u64,
    pub bytes_written: u64,
    pub files_written: u64,
    /// Bytes moved into this level by trivial moves (no I/O).
    pub bytes_moved: u64,
    pub moves: u64,
    /// Files of this level rewritten unchanged by a compaction (lifetime-leveling's moves), and
    /// their bytes (included in `bytes_written`).
    pub move_rewrites: u64,
    pub move_rewrite_bytes: u64,
    /// Output bytes written short-lived (lifetime-leveling's T-zone; included in `bytes_written`).
    pub short_lived_bytes: u64,
    /// Bytes written into this level by a compaction of a level two or more above (gear's passive
    /// compactions; included in `bytes_written`).
    pub passive_bytes: u64,
    pub input_data_blocks: u64,
    pub output_data_blocks: u64,
    /// Bytes of output placed by cloning (RemapCom) and by the copy fallback.
    pub cloned_bytes: u64,
    pub copied_bytes: u64,
    /// Alignment padding in the outputs (UDB retention's cost included).
    pub padding_bytes: u64,
    /// RemapCom: input data blocks found unchanged (UDBs), UDBs placed by cloning (remapped), output
    /// blocks closed early to keep a UDB whole (retention), and UDBs whose entries were rewritten.
    pub udbs_found: u64,
    pub udbs_cloned: u64,
    pub udb_retentions: u64,
    pub udbs_written: u64,
    pub entries_dropped: u64,
    /// Duration of the flushes (level 0) and compactions into this level, on the database's
    /// clock: in simulation the background lane's simulated time (a compaction's excludes the
    /// flushes it ran in between, which count at level 0), on real files wall-clock time.
    pub micros: u64,
}

impl LevelStats {
    /// Bytes written / bytes read from the input level (RocksDB's W-Amp column).
    pub fn write_amplification(&self) -> f64 {
        if self.bytes_read_input_level == 0 {
            return 0.0;
        }
        self.bytes_written as f64 / self.bytes_read_input_level as f64
    }

    /// UDB ratio (inputs): UDBs found / data blocks of the compaction inputs.
    pub fn udb_ratio_inputs(&self) -> f64 {
        ratio(self.udbs_found, self.input_data_blocks)
    }

    /// UDB ratio (outputs): UDBs cloned / data blocks of the compaction outputs.
    pub fn udb_ratio_outputs(&self) -> f64 {
        ratio(self.udbs_cloned, self.output_data_blocks)
    }

    /// Adds what RemapCom did in one compaction into this level.
    pub fn add_udb_stats(&mut self, u: &UdbStats) {
        self.udbs_found += u.udbs_found;
        self.udbs_cloned += u.udbs_cloned;
        self.udb_retentions += u.udb_retentions;
        self.udbs_written += u.udbs_written;
    }
}

/// Writes held up for one cause: how many waits, and their time in all (simulated nanoseconds in
/// simulation, wall-clock otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stalls {
    pub count: u64,
    pub nanos: u64,
}

impl Stalls {
    /// Counts one wait of `nanos`.
    pub fn add(&mut self, nanos: u64) {
        self.count += 1;
        self.nanos += nanos;
    }

    fn merge(&mut self, other: &Stalls) {
        self.count += other.count;
        self.nanos += other.nanos;
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DbStats {
    /// Keys + values the user wrote.
    pub user_bytes: u64,
    pub writes: u64,
    pub puts: u64,
    pub deletes: u64,
    /// Bytes appended to WALs (records, before block framing).
    pub wal_bytes: u64,
    pub flushes: u64,
    pub flush_bytes: u64,
    pub compactions: u64,
    /// Writes delayed at the level-0 slowdown trigger (1 ms each, or paced at `delayed_write_rate`).
    pub slowdowns: Stalls,
    /// Writes that waited for a memtable flush, and for level 0 below the stop trigger.
    pub memtable_stalls: Stalls,
    pub l0_stop_stalls: Stalls,
    pub levels: Vec<LevelStats>,
    pub block_cache: CacheStats,
    /// What WAL replay kept and dropped at the last open.
    pub recovery: RecoveryReport,
    /// The engine's work in host CPU cost terms, by the lane that did it (see [`crate::cpu`]).
    pub cpu_foreground: CpuCounts,
    pub cpu_background: CpuCounts,
    /// SSTs read without their filter block, which was damaged (each error names the file and the
    /// block's offset): reads are right, gets of keys they lack cost a block read. A compaction
    /// or a repair that rewrites the file rebuilds its filter.
    pub damaged_filters: Vec<String>,
}

impl DbStats {
    pub fn level_mut(&mut self, level: usize) -> &mut LevelStats {
        if self.levels.len() <= level {
            self.levels.resize(level + 1, LevelStats::default());
        }
        &mut self.levels[level]
    }

    /// Adds the activity of `earlier`, a database this one replaced (db_bench destroys the database
    /// before each fill), so that totals cover the whole run; the shape (files and bytes per
    /// level, cache contents) stays this database's.
    pub fn add_history(&mut self, earlier: &DbStats) {
        // Destructured whole so that a new field has to be placed on one side or the other.
        let DbStats {
            user_bytes,
            writes,
            puts,
            deletes,
            wal_bytes,
            flushes,
            flush_bytes,
            compactions,
            slowdowns,
            memtable_stalls,
            l0_stop_stalls,
            levels,
            block_cache,
            recovery: _, // the last open's, which is this database's
            cpu_foreground,
            cpu_background,
            damaged_filters: _, // about files, which are this database's
        } = earlier;
        self.cpu_foreground.add(cpu_foreground);
        self.cpu_background.add(cpu_background);
        self.user_bytes += user_bytes;
        self.writes += writes;
        self.puts += puts;
        self.deletes += deletes;
        self.wal_bytes += wal_bytes;
        self.flushes += flushes;
        self.flush_bytes += flush_bytes;
        self.compactions += compactions;
        self.slowdowns.merge(slowdowns);
        self.memtable_stalls.merge(memtable_stalls);
        self.l0_stop_stalls.merge(l0_stop_stalls);
        self.block_cache.hits += block_cache.hits;
        self.block_cache.misses += block_cache.misses;
        self.block_cache.inserts += block_cache.inserts;
        self.block_cache.evictions += block_cache.evictions;
        for (level, e) in levels.iter().enumerate() {
            let LevelStats {
                files: _,
                bytes: _,
                compactions,
                bytes_read_input_level,
                bytes_read_output_level,
                bytes_written,
                files_written,
                bytes_moved,
                moves,
                move_rewrites,
                move_rewrite_bytes,
                short_lived_bytes,
                passive_bytes,
                input_data_blocks,
                output_data_blocks,
                cloned_bytes,
                copied_bytes,
                padding_bytes,
                udbs_found,
                udbs_cloned,
                udb_retentions,
                udbs_written,
                entries_dropped,
                micros,
            } = e;
            let l = self.level_mut(level);
            l.compactions += compactions;
            l.bytes_read_input_level += bytes_read_input_level;
            l.bytes_read_output_level += bytes_read_output_level;
            l.bytes_written += bytes_written;
            l.files_written += files_written;
            l.bytes_moved += bytes_moved;
            l.moves += moves;
            l.move_rewrites += move_rewrites;
            l.move_rewrite_bytes += move_rewrite_bytes;
            l.short_lived_bytes += short_lived_bytes;
            l.passive_bytes += passive_bytes;
            l.input_data_blocks += input_data_blocks;
            l.output_data_blocks += output_data_blocks;
            l.cloned_bytes += cloned_bytes;
            l.copied_bytes += copied_bytes;
            l.padding_bytes += padding_bytes;
            l.udbs_found += udbs_found;
            l.udbs_cloned += udbs_cloned;
            l.udb_retentions += udb_retentions;
            l.udbs_written += udbs_written;
            l.entries_dropped += entries_dropped;
            l.micros += micros;
        }
    }

    /// Copies the current shape (files and bytes per level) of `v`.
    pub fn fill_levels(&mut self, v: &Version) {
        for level in 0..v.num_levels() {
            let l = self.level_mut(level);
            l.files = v.num_files(level);
            l.bytes = v.level_bytes(level);
        }
    }

    /// UDB ratios over all levels: (inputs, outputs), as in [`LevelStats::udb_ratio_inputs`] and
    /// [`LevelStats::udb_ratio_outputs`].
    pub fn udb_ratios(&self) -> (f64, f64) {
        let sum = |f: fn(&LevelStats) -> u64| self.levels.iter().map(f).sum::<u64>();
        (
            ratio(sum(|l| l.udbs_found), sum(|l| l.input_data_blocks)),
            ratio(sum(|l| l.udbs_cloned), sum(|l| l.output_data_blocks)),
        )
    }

    /// Everything the engine wrote to files: WAL, flushes, compactions.
    pub fn engine_write_bytes(&self) -> u64 {
        self.wal_bytes + self.levels.iter().map(|l| l.bytes_written).sum::<u64>()
    }

    /// Every stall, whatever its cause.
    pub fn stalls(&self) -> Stalls {
        let mut all = self.slowdowns;
        all.merge(&self.memtable_stalls);
        all.merge(&self.l0_stop_stalls);
        all
    }

    /// Engine write amplification: bytes written to files / user bytes.
    pub fn write_amplification(&self) -> f64 {
        if self.user_bytes == 0 {
            return 0.0;
        }
        self.engine_write_bytes() as f64 / self.user_bytes as f64
    }

    /// A RocksDB-like "Compaction Stats" table.
    pub fn render(&self) -> String {
        let mb = |b: u64| b as f64 / (1 << 20) as f64;
        let mut out = String::from(
            "Level  Files   Size(MB)  Read-L(MB)  Read-L+1(MB)  Write(MB)  Moved(MB)  Cloned(MB)  W-Amp  Comps\n",
        );
        for (i, l) in self.levels.iter().enumerate() {
            out.push_str(&format!(
                "L{:<5} {:>5} {:>10.1} {:>11.1} {:>13.1} {:>10.1} {:>10.1} {:>11.1} {:>6.2} {:>6}\n",
                i,
                l.files,
                mb(l.bytes),
                mb(l.bytes_read_input_level),
                mb(l.bytes_read_output_level),
                mb(l.bytes_written),
                mb(l.bytes_moved),
                mb(l.cloned_bytes),
                l.write_amplification(),
                l.compactions
            ));
        }
        let found: u64 = self.levels.iter().map(|l| l.udbs_found).sum();
        if found > 0 {
            let (r_in, r_out) = self.udb_ratios();
            out.push_str(&format!(
                "remap: {} UDBs found (ratio {:.3} of input blocks), {} cloned (ratio {:.3} of output blocks), {} retentions\n",
                found,
                r_in,
                self.levels.iter().map(|l| l.udbs_cloned).sum::<u64>(),
                r_out,
                self.levels.iter().map(|l| l.udb_retentions).sum::<u64>(),
            ));
        }
        out.push_str(&format!(
            "user {:.1} MB, WAL {:.1} MB, engine write amplification {:.2}; stalls: {} slowdowns ({:.3} s), \
             {} memtable ({:.3} s), {} level-0 stop ({:.3} s)\n",
            mb(self.user_bytes),
            mb(self.wal_bytes),
            self.write_amplification(),
            self.slowdowns.count,
            self.slowdowns.nanos as f64 / 1e9,
            self.memtable_stalls.count,
            self.memtable_stalls.nanos as f64 / 1e9,
            self.l0_stop_stalls.count,
            self.l0_stop_stalls.nanos as f64 / 1e9,
        ));
        if !self.recovery.is_clean() {
            out.push_str(&format!("{}\n", self.recovery));
        }
        for e in &self.damaged_filters {
            out.push_str(&format!("read without its damaged filter block: {e}\n"));
        }
        out
    }
}
