//! What a simulated device and its file system report beside the flash's own counts: the host's
//! writes by cause and per level, the page cache's work, the zones' state (built from the
//! file systems' statistics, by the stack that ran).

use flashsim::FlashReport;
use serde::{Deserialize, Serialize};
use storage::{HostWriteStats, PageCacheStats, ZoneReport};

impl DeviceReport {
    /// A key-value SSD's report: the host's writes are the pages programmed for its data (its
    /// flushes), and the device's compaction writes are reported per level, as the LSM's are.
    pub fn of_kv_ssd(flash: FlashReport, compaction_by_level: Vec<u64>) -> DeviceReport {
        let host = flash.host_write_bytes;
        DeviceReport {
            host_write_bytes: HostWrites {
                total: host,
                wal: 0,
                flush: host,
                compaction_by_level: compaction_by_level.clone(),
                manifest: 0,
                fs_metadata: 0,
                other: 0,
                moves: 0,
                t_zone: 0,
                zone_gc: 0,
            },
            levels: compaction_by_level
                .iter()
                .enumerate()
                .map(|(level, &b)| LevelDevice {
                    level,
                    host_write_bytes: b + if level == 0 { host } else { 0 },
                    cloned_bytes: 0,
                })
                .collect(),
            flash,
            zones: None,
            page_cache: None,
        }
    }

    pub(crate) fn new(s: &HostWriteStats, flash: FlashReport, zones: Option<ZoneSummary>) -> DeviceReport {
        // GC copies cannot be attributed to a level; each level's flash programs are its own host
        // page writes, and the GC share is reported whole.
        let levels = s
            .compaction_bytes
            .iter()
            .enumerate()
            .map(|(level, &bytes)| LevelDevice {
                level,
                host_write_bytes: bytes + if level == 0 { s.flush_bytes } else { 0 },
                cloned_bytes: s.cloned_bytes_by_level.get(level).copied().unwrap_or(0),
            })
            .collect();
        DeviceReport {
            host_write_bytes: HostWrites {
                total: s.host_write_bytes(),
                wal: s.wal_bytes,
                flush: s.flush_bytes,
                compaction_by_level: s.compaction_bytes.clone(),
                manifest: s.manifest_bytes,
                fs_metadata: s.fs_metadata_bytes,
                other: s.other_bytes,
                moves: s.move_bytes,
                t_zone: s.t_zone_bytes,
                zone_gc: s.zone_gc_bytes,
            },
            flash,
            levels,
            zones,
            page_cache: None,
        }
    }
}

/// What the host's page cache did (`page_cache` of a result): hits and misses of the pages reads
/// asked for, pages read ahead, bytes written back by cause, dirty bytes of deleted files never
/// written, the most dirty bytes held at once.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PageCacheSummary {
    pub capacity_bytes: u64,
    pub hits: u64,
    pub misses: u64,
    pub hit_ratio: Option<f64>,
    pub readahead_pages: u64,
    pub evictions: u64,
    pub written_back_bytes: WrittenBack,
    pub dropped_dirty_bytes: u64,
    pub dirty_peak_bytes: u64,
}

/// Bytes the page cache wrote back, by cause.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WrittenBack {
    pub total: u64,
    pub fsync: u64,
    pub background: u64,
    pub expired: u64,
    pub pressure: u64,
    pub clone: u64,
    /// Before a direct-I/O read or write of a file with dirty pages.
    #[serde(default)]
    pub direct: u64,
    /// At the end of the run (an unmount).
    pub unmount: u64,
}

impl PageCacheSummary {
    pub(crate) fn new(s: &PageCacheStats) -> PageCacheSummary {
        PageCacheSummary {
            capacity_bytes: s.capacity_bytes,
            hits: s.hits,
            misses: s.misses,
            hit_ratio: s.hit_ratio(),
            readahead_pages: s.readahead_pages,
            evictions: s.evictions,
            written_back_bytes: WrittenBack {
                total: s.written_back(),
                fsync: s.written_back_fsync,
                background: s.written_back_background,
                expired: s.written_back_expired,
                pressure: s.written_back_pressure,
                clone: s.written_back_clone,
                direct: s.written_back_direct,
                unmount: s.written_back_unmount,
            },
            dropped_dirty_bytes: s.dropped_dirty_bytes,
            dirty_peak_bytes: s.dirty_peak_bytes,
        }
    }
}

/// What a ZoneFs run did to its zones (seed 003's measures): the utilisation of every data zone
/// in use at the end (live bytes / zone capacity), resets, host GC, padding and space
/// amplification.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ZoneSummary {
    pub zone_size: u64,
    pub zone_capacity: u64,
    pub data_zones: usize,
    /// Data zones holding anything at the end.
    pub used_zones: usize,
    /// Live bytes / zone capacity of each used data zone, in zone order.
    pub utilisation: Vec<f64>,
    /// Used zones per tenth of utilisation ([0, 0.1), ..., [0.9, 1.0]).
    pub utilisation_histogram: Vec<u64>,
    /// Used zones at least 90 % utilised (seed 003: "over 90 % at most zones").
    pub zones_over_90_percent: usize,
    /// Bytes written in used data zones / live bytes.
    pub space_amplification: Option<f64>,
    pub resets: u64,
    pub gc_runs: u64,
    pub gc_copied_bytes: u64,
    pub padding_bytes: u64,
}

impl ZoneSummary {
    pub(crate) fn new(r: &ZoneReport, zone_size: u64, page: u64) -> ZoneSummary {
        let utilisation = r.utilisation();
        ZoneSummary {
            zone_size,
            zone_capacity: r.zone_capacity_bytes,
            data_zones: r.data_zones().count(),
            used_zones: r.used_data_zones(),
            zones_over_90_percent: utilisation.iter().filter(|&&u| u >= 0.9).count(),
            utilisation,
            utilisation_histogram: r.utilisation_histogram(10),
            space_amplification: r.space_amplification(page),
            resets: r.counters.resets,
            gc_runs: r.counters.gc_runs,
            gc_copied_bytes: r.counters.gc_copied_bytes,
            padding_bytes: r.counters.padding_bytes,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostWrites {
    pub total: u64,
    pub wal: u64,
    pub flush: u64,
    pub compaction_by_level: Vec<u64>,
    pub manifest: u64,
    pub fs_metadata: u64,
    pub other: u64,
    /// SSTs rewritten unchanged into their level's zone (lifetime-leveling's moves).
    pub moves: u64,
    /// Short-lived SSTs written to the T-zone (lifetime-leveling).
    pub t_zone: u64,
    /// Live data copied by host zone GC (ZoneFs).
    pub zone_gc: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LevelDevice {
    pub level: usize,
    /// Pages the engine wrote into this level (flushes count at level 0), in bytes.
    pub host_write_bytes: u64,
    pub cloned_bytes: u64,
}

/// What the simulated device saw: the file system's writes by cause, the device's own report, and
/// host writes per level.
#[derive(Clone, Debug)]
pub struct DeviceReport {
    pub host_write_bytes: HostWrites,
    pub flash: FlashReport,
    pub levels: Vec<LevelDevice>,
    /// Zones, on a ZNS device.
    pub zones: Option<ZoneSummary>,
    /// The host's page cache, when the file system has one.
    pub page_cache: Option<PageCacheSummary>,
}
