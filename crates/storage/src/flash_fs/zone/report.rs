//! What a ZoneFs reports about its zones: per zone its state, write pointer, live bytes and class,
//! and the file system's own counters (resets, GC runs and copies, padding, finishes), with the
//! zone-utilisation distribution of seed 003 (live bytes / zone capacity, per zone).

use flashsim::ZoneState;

use super::alloc::ZoneClass;
use super::St;

/// Counts of what the file system did to zones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ZoneFsCounters {
    /// Data zones reset (a file's last extent died, GC, mount).
    pub resets: u64,
    /// Metadata zones reset by the journal's roll-over.
    pub metadata_resets: u64,
    /// Zones finished to free an active-zone token (or at mount).
    pub finishes: u64,
    /// Host GC runs (victims reclaimed).
    pub gc_runs: u64,
    /// Bytes (whole pages) host GC copied.
    pub gc_copied_bytes: u64,
    /// Bytes of padding written to complete the partial last page at a sync.
    pub padding_bytes: u64,
}

/// One zone in a report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZoneUsage {
    pub zone: u32,
    pub state: ZoneState,
    /// Pages written (the capacity once Full).
    pub write_pointer: u64,
    /// Bytes of files' extents in the zone.
    pub live_bytes: u64,
    /// The class whose stream opened the zone (None for metadata and empty zones).
    pub class: Option<ZoneClass>,
    pub metadata: bool,
}

/// Every zone and the file system's counters.
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneReport {
    pub zones: Vec<ZoneUsage>,
    /// Writable bytes per zone.
    pub zone_capacity_bytes: u64,
    pub counters: ZoneFsCounters,
}

impl ZoneReport {
    /// Live bytes / zone capacity for every data zone that is not empty (seed 003's zone
    /// utilisation), in zone order.
    pub fn utilisation(&self) -> Vec<f64> {
        self.data_zones()
            .filter(|z| z.state != ZoneState::Empty)
            .map(|z| z.live_bytes as f64 / self.zone_capacity_bytes.max(1) as f64)
            .collect()
    }

    /// The utilisation distribution in `buckets` equal bins over [0, 1] (1.0 falls in the last).
    pub fn utilisation_histogram(&self, buckets: usize) -> Vec<u64> {
        let mut h = vec![0u64; buckets.max(1)];
        for u in self.utilisation() {
            let i = ((u * h.len() as f64) as usize).min(h.len() - 1);
            h[i] += 1;
        }
        h
    }

    /// Data zones holding anything (not Empty).
    pub fn used_data_zones(&self) -> usize {
        self.data_zones().filter(|z| z.state != ZoneState::Empty).count()
    }

    /// Space amplification: bytes written in used data zones / live bytes.
    pub fn space_amplification(&self, page_size: u64) -> Option<f64> {
        let live: u64 = self.data_zones().map(|z| z.live_bytes).sum();
        let held: u64 = self.data_zones().map(|z| z.write_pointer * page_size).sum();
        (live > 0).then(|| held as f64 / live as f64)
    }

    pub fn data_zones(&self) -> impl Iterator<Item = &ZoneUsage> {
        self.zones.iter().filter(|z| !z.metadata)
    }
}

impl St {
    pub(crate) fn report(&self) -> ZoneReport {
        let zones = (0..self.dev.num_zones())
            .map(|z| {
                let (state, write_pointer) = self.zone_state(z);
                let metadata = z < self.place.first_data_zone;
                let u = self.place.zones[z as usize];
                ZoneUsage {
                    zone: z,
                    state,
                    write_pointer,
                    live_bytes: u.live,
                    class: if metadata || state == ZoneState::Empty { None } else { u.class },
                    metadata,
                }
            })
            .collect();
        ZoneReport {
            zones,
            zone_capacity_bytes: self.capacity_pages() * self.page_size as u64,
            counters: self.place.counters,
        }
    }
}
