//! What the zone placement keeps beside the device (per zone what the file system knows: live
//! bytes, class; the zone each stream writes; the open and active budgets), building it at format
//! and mount, and the consistency check between inodes, zones and the device.

use std::collections::BTreeMap;

use flashsim::{Nanos, SimClock, Wait, ZoneState, ZonedSsd};

use super::alloc::{ZoneAllocator, ZoneClass};
use super::extent::{Extent, Inode};
use super::report::ZoneFsCounters;
use super::ZoneRegions;
use super::{St, ZoneFsOptions};
use crate::error::Result;
use crate::flash_fs::journal::Journal;
use crate::flash_fs::records::{DurableInode, DurableMeta};
use crate::flash_fs::state::State;
use crate::flash_fs::{corrupt, device_error};

/// Who appends to a zone (`space` keeps each stream's open zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum StreamKey {
    /// Every file of a class (shared, per-level and per-window policies).
    Class(ZoneClass),
    /// One file (the lifetime policy: a zone is written by one file at a time).
    File(u64),
    /// Host GC's copies of a class.
    Gc(ZoneClass),
}

/// Points inside a GC run (`gc`) where [`super::ZoneFs::crash_during_next_gc`] can stop it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcStep {
    /// After the first live extent was copied, before the others.
    AfterFirstCopy,
    /// After every live extent was copied, before the new map is durable.
    AfterCopies,
    /// After the new map is durable, before the victim is reset.
    AfterCommit,
}

/// What the file system knows of a zone.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ZoneUse {
    /// Bytes of extents in the zone that some inode holds.
    pub live: u64,
    /// The class whose stream opened the zone (after a remount: of a file with data in it).
    pub class: Option<ZoneClass>,
    /// When a stream last wrote it (for closing the least recently written zone).
    pub last_write: u64,
}

/// What the zone placement keeps beside the device.
pub struct ZonePlacement {
    pub(crate) opts: ZoneFsOptions,
    pub(crate) alloc: std::sync::Arc<dyn ZoneAllocator>,
    pub(crate) zones: Vec<ZoneUse>,
    /// The zone each stream is writing.
    pub(crate) streams: BTreeMap<StreamKey, u32>,
    pub(crate) counters: ZoneFsCounters,
    pub(crate) chunk_pages: usize,
    pub(crate) first_data_zone: u32,
    /// Active and open zones the data streams may hold (metadata takes one of each).
    pub(crate) active_budget: Option<u32>,
    pub(crate) open_budget: Option<u32>,
    pub(crate) tick: u64,
    pub(crate) gc_crash: Option<GcStep>,
}

impl ZonePlacement {
    /// A state for `dev` that holds nothing yet (the options checked against the device).
    pub(crate) fn state(dev: ZonedSsd, opts: ZoneFsOptions) -> Result<St> {
        opts.validate(&dev)?;
        let cfg = dev.config();
        let minus_metadata = |v: Option<u32>| v.map(|n| n - 1);
        let metadata_zones = opts.metadata_zones;
        let place = ZonePlacement {
            alloc: opts.policy.allocator(),
            zones: vec![ZoneUse::default(); dev.num_zones() as usize],
            streams: BTreeMap::new(),
            counters: ZoneFsCounters::default(),
            chunk_pages: opts.write_chunk_pages.unwrap_or(dev.planes_per_zone()) as usize,
            first_data_zone: opts.metadata_zones,
            active_budget: minus_metadata(opts.max_active_zones.or(cfg.max_active_zones)),
            open_budget: minus_metadata(opts.max_open_zones.or(cfg.max_open_zones)),
            tick: 0,
            gc_crash: None,
            opts,
        };
        let journal = Journal::unloaded(ZoneRegions { zones: (0..metadata_zones).collect() });
        let page_size = dev.page_size() as usize;
        Ok(State::new(dev, journal, place, page_size))
    }
}

impl St {
    /// Resets every zone and writes an empty file system.
    pub(crate) fn format(&mut self, clock: &SimClock) -> Result<()> {
        let mut done = clock.now();
        for z in self.place.first_data_zone..self.dev.num_zones() {
            if self.dev.zone(z).map_err(|e| device_error("format", "", e))?.state != ZoneState::Empty {
                done = done.max(self.reset_zone(clock.now(), z, "format")?);
            }
        }
        let regions = ZoneRegions { zones: (0..self.place.opts.metadata_zones).collect() };
        let (journal, t) = Journal::format(&mut self.dev, clock.now(), regions)?;
        clock.wait(done.max(t), Wait::Metadata);
        self.stats.fs_metadata_bytes += journal.pages_written * self.page_size as u64;
        self.journal = journal;
        self.load(clock, DurableMeta::empty())
    }

    /// Reads the durable state from the metadata zones.
    pub(crate) fn recover_journal(&mut self, clock: &SimClock) -> Result<DurableMeta<Extent>> {
        let regions = ZoneRegions { zones: (0..self.place.opts.metadata_zones).collect() };
        let (journal, meta, done) = Journal::recover(&mut self.dev, clock.now(), regions)?;
        clock.wait(done, Wait::Metadata);
        self.journal = journal;
        Ok(meta)
    }

    pub(crate) fn begin_load(&mut self) {
        self.place.streams.clear();
        self.place.zones.iter_mut().for_each(|z| *z = ZoneUse::default());
    }

    /// A durable inode's extents become live bytes of their zones.
    pub(crate) fn restore_inode(&mut self, ino: u64, d: DurableInode<Extent>) -> Result<Inode> {
        let class = self.place.alloc.class(d.hint);
        for e in &d.items {
            let first_data_zone = self.place.first_data_zone;
            let z = self.place.zones.get_mut(e.zone as usize).filter(|_| e.zone >= first_data_zone);
            let Some(z) = z else {
                return Err(corrupt(format!("inode {ino} has an extent in zone {}, not a data zone", e.zone)));
            };
            z.live += e.bytes;
            z.class.get_or_insert(class);
        }
        if d.items.iter().map(|e| e.bytes).sum::<u64>() != d.len {
            return Err(corrupt(format!("inode {ino}: extents do not add up to its {} bytes", d.len)));
        }
        Ok(Inode::restored(d.hint, d.len, d.items))
    }

    /// Zones nothing holds are reset; partly written ones are finished (no stream owns them now).
    pub(crate) fn end_load(&mut self, at: Nanos) -> Result<()> {
        for z in self.place.first_data_zone..self.dev.num_zones() {
            let state = self.dev.zone(z).map_err(|e| device_error("mount", "", e))?.state;
            if state == ZoneState::Empty || matches!(state, ZoneState::ReadOnly | ZoneState::Offline) {
                continue;
            }
            if self.place.zones[z as usize].live == 0 {
                self.reset_zone(at, z, "mount")?;
            } else if state != ZoneState::Full {
                self.dev.finish(z).map_err(|e| device_error("mount", "", e))?;
                self.place.counters.finishes += 1;
            }
        }
        Ok(())
    }
}

/// What [`ZoneFs::check_consistency`](super::ZoneFs::check_consistency) found: the file
/// system's inodes, extents, zones and write pointers disagree; `what` names the inode, extent or
/// zone and both sides.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("inconsistent zoned file system: {what}")]
pub struct Inconsistency {
    pub what: String,
}

impl St {
    /// Checks the invariants between inodes, zones and the device: every inode's extents hold its
    /// device bytes, lie below their zone's write pointer in data zones, and never overlap; every
    /// zone's live bytes are the sum of the extents in it. For tests.
    pub(crate) fn check_consistency(&self) -> std::result::Result<(), Inconsistency> {
        let bad = |what: String| Inconsistency { what };
        let ps = self.page_size as u64;
        let mut live = vec![0u64; self.place.zones.len()];
        let mut owner: std::collections::HashMap<(u32, u64), u64> = std::collections::HashMap::new();
        for (&ino, i) in &self.inodes {
            let sum: u64 = i.extents.iter().map(|e| e.bytes).sum();
            if sum != i.dev_len || i.dev_len + i.buf.len() as u64 != i.len || i.synced_len > i.len {
                return Err(bad(format!(
                    "inode {ino}: extents {sum} B, dev_len {}, buffer {} B, len {}, synced {}",
                    i.dev_len,
                    i.buf.len(),
                    i.len,
                    i.synced_len
                )));
            }
            for e in &i.extents {
                if e.zone < self.place.first_data_zone || e.zone as usize >= self.place.zones.len() || e.bytes == 0 {
                    return Err(bad(format!("inode {ino}: bad extent {e:?}")));
                }
                let (_, wp) = self.zone_state(e.zone);
                if e.start as u64 + e.pages(ps) > wp {
                    return Err(bad(format!("inode {ino}: extent {e:?} past the write pointer {wp}")));
                }
                live[e.zone as usize] += e.bytes;
                for p in e.start as u64..e.start as u64 + e.pages(ps) {
                    if let Some(other) = owner.insert((e.zone, p), ino) {
                        return Err(bad(format!("zone {} page {p} held by inodes {other} and {ino}", e.zone)));
                    }
                }
            }
        }
        for (z, u) in self.place.zones.iter().enumerate() {
            if u.live != live[z] {
                return Err(bad(format!("zone {z}: {} live bytes recorded, {} in extents", u.live, live[z])));
            }
        }
        Ok(())
    }
}
