//! The state behind a ZoneFs lock: the device, the journal and durable state, the namespace and
//! inodes, and per zone what the file system knows (live bytes, class); and mounting it from the
//! device, the namespace helpers and journal commits.

use std::collections::BTreeMap;

use flashsim::{Nanos, SimClock, Wait, ZoneState, ZonedSsd};

use super::alloc::{ZoneAllocator, ZoneClass};
use super::extent::Inode;
use super::gc::GcStep;
use super::journal::Journal;
use super::records::{DurableMeta, Record};
use super::report::ZoneFsCounters;
use super::space::StreamKey;
use super::ZoneFsOptions;
use crate::error::{FsError, Result};
use crate::fs::WriteHint;
use crate::host_writes::HostWriteStats;
use crate::namespace::Namespace;
use crate::path;

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

pub(crate) struct State {
    pub dev: ZonedSsd,
    pub opts: ZoneFsOptions,
    pub alloc: Box<dyn ZoneAllocator>,
    pub journal: Journal,
    pub meta: DurableMeta,
    pub ns: Namespace,
    pub inodes: BTreeMap<u64, Inode>,
    pub next_ino: u64,
    /// Records waiting for the next journal commit (inodes that became garbage).
    pub pending: Vec<Record>,
    pub zones: Vec<ZoneUse>,
    /// The zone each stream is writing.
    pub streams: BTreeMap<StreamKey, u32>,
    pub locks: BTreeMap<String, u64>,
    pub next_lock_id: u64,
    pub stats: HostWriteStats,
    pub counters: ZoneFsCounters,
    pub page_size: usize,
    pub chunk_pages: usize,
    pub first_data_zone: u32,
    /// Active and open zones the data streams may hold (metadata takes one of each).
    pub active_budget: Option<u32>,
    pub open_budget: Option<u32>,
    pub tick: u64,
    pub gc_crash: Option<GcStep>,
}

impl State {
    fn new(dev: ZonedSsd, opts: ZoneFsOptions) -> Result<State> {
        opts.validate(&dev)?;
        let cfg = dev.config();
        let minus_metadata = |v: Option<u32>| v.map(|n| n - 1);
        let active_budget = minus_metadata(opts.max_active_zones.or(cfg.max_active_zones));
        let open_budget = minus_metadata(opts.max_open_zones.or(cfg.max_open_zones));
        let chunk_pages = opts.write_chunk_pages.unwrap_or(dev.planes_per_zone()) as usize;
        let page_size = dev.page_size() as usize;
        let zones = vec![ZoneUse::default(); dev.num_zones() as usize];
        let journal_zones: Vec<u32> = (0..opts.metadata_zones).collect();
        Ok(State {
            alloc: opts.policy.allocator(),
            journal: Journal::unloaded(journal_zones),
            meta: DurableMeta::empty(),
            ns: Namespace::default(),
            inodes: BTreeMap::new(),
            next_ino: 1,
            pending: Vec::new(),
            zones,
            streams: BTreeMap::new(),
            locks: BTreeMap::new(),
            next_lock_id: 0,
            stats: HostWriteStats::default(),
            counters: ZoneFsCounters::default(),
            page_size,
            chunk_pages,
            first_data_zone: opts.metadata_zones,
            active_budget,
            open_budget,
            tick: 0,
            gc_crash: None,
            opts,
            dev,
        })
    }

    /// Resets every zone and writes an empty file system.
    pub fn format(dev: ZonedSsd, clock: &SimClock, opts: ZoneFsOptions) -> Result<State> {
        let mut st = State::new(dev, opts)?;
        let mut done = clock.now();
        for z in st.first_data_zone..st.dev.num_zones() {
            if st.dev.zone(z).map_err(|e| super::device_error("format", "", e))?.state != ZoneState::Empty {
                done = done.max(st.reset_zone(clock.now(), z, "format")?);
            }
        }
        let zones = (0..opts.metadata_zones).collect();
        let (journal, t) = Journal::format(&mut st.dev, clock.now(), zones)?;
        clock.wait(done.max(t), Wait::Metadata);
        st.stats.fs_metadata_bytes += journal.pages_written * st.page_size as u64;
        st.journal = journal;
        st.ns = Namespace::from_durable(&st.meta.dirs);
        Ok(st)
    }

    pub fn mount(dev: ZonedSsd, clock: &SimClock, opts: ZoneFsOptions) -> Result<State> {
        let mut st = State::new(dev, opts)?;
        st.reload(clock)?;
        Ok(st)
    }

    /// (Re)builds everything but the device and the statistics from the metadata zones.
    pub fn reload(&mut self, clock: &SimClock) -> Result<()> {
        let zones = (0..self.opts.metadata_zones).collect();
        let (journal, meta, done) = Journal::recover(&mut self.dev, clock.now(), zones)?;
        clock.wait(done, Wait::Metadata);
        self.journal = journal;
        self.ns = Namespace::from_durable(&meta.dirs);
        self.inodes.clear();
        self.next_ino = meta.next_ino.max(1);
        self.pending.clear();
        self.streams.clear();
        self.locks.clear();
        self.zones.iter_mut().for_each(|z| *z = ZoneUse::default());
        let reachable: Vec<u64> = meta.dirs.values().flat_map(|d| d.values().copied()).collect();
        for ino in reachable {
            if self.inodes.contains_key(&ino) {
                continue;
            }
            let d = meta.inodes.get(&ino).cloned().unwrap_or_default();
            let class = self.alloc.class(d.hint);
            for e in &d.extents {
                let z = self.zones.get_mut(e.zone as usize).filter(|_| e.zone >= self.first_data_zone);
                let Some(z) = z else {
                    return Err(corrupt(format!("inode {ino} has an extent in zone {}, not a data zone", e.zone)));
                };
                z.live += e.bytes;
                z.class.get_or_insert(class);
            }
            if d.extents.iter().map(|e| e.bytes).sum::<u64>() != d.len {
                return Err(corrupt(format!("inode {ino}: extents do not add up to its {} bytes", d.len)));
            }
            self.inodes.insert(ino, Inode::restored(d.hint, d.len, d.extents));
        }
        // Durable state of unreachable inodes is garbage: forget it.
        let mut meta = meta;
        meta.inodes.retain(|ino, _| self.inodes.contains_key(ino));
        self.meta = meta;
        // Zones nothing holds are reset; partly written ones are finished (no stream owns them now).
        let at = clock.now();
        for z in self.first_data_zone..self.dev.num_zones() {
            let state = self.dev.zone(z).map_err(|e| super::device_error("mount", "", e))?.state;
            if state == ZoneState::Empty || matches!(state, ZoneState::ReadOnly | ZoneState::Offline) {
                continue;
            }
            if self.zones[z as usize].live == 0 {
                self.reset_zone(at, z, "mount")?;
            } else if state != ZoneState::Full {
                self.dev.finish(z).map_err(|e| super::device_error("mount", "", e))?;
                self.counters.finishes += 1;
            }
        }
        Ok(())
    }

    pub fn lookup(&self, op: &'static str, p: &str) -> Result<u64> {
        path::validate(p)?;
        if self.ns.contains_dir(p) {
            return Err(FsError::WrongKind { op, path: p.to_string(), expected: "file" });
        }
        self.ns
            .dir(path::parent(p))
            .and_then(|d| d.entries().get(path::file_name(p)))
            .copied()
            .ok_or_else(|| FsError::NotFound { op, path: p.to_string() })
    }

    /// Checks that `p` can name a new file: a valid path, not a directory, in an existing directory.
    pub fn check_new_file(&self, op: &'static str, p: &str) -> Result<()> {
        path::validate(p)?;
        if self.ns.contains_dir(p) {
            return Err(FsError::WrongKind { op, path: p.to_string(), expected: "file" });
        }
        let parent = path::parent(p);
        if !self.ns.contains_dir(parent) {
            return Err(if self.is_file(parent) {
                FsError::WrongKind { op, path: parent.to_string(), expected: "directory" }
            } else {
                FsError::NotFound { op, path: p.to_string() }
            });
        }
        Ok(())
    }

    pub fn is_file(&self, p: &str) -> bool {
        self.ns.is_file(p)
    }

    pub fn new_inode(&mut self, hint: WriteHint) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(ino, Inode::new(hint));
        ino
    }

    /// Drops `ino` if no directory (current or durable) names it any more: its extents die, and
    /// zones left with nothing live are reset.
    pub fn collect_inode(&mut self, ino: u64, at: Nanos) {
        if self.ns.referenced(ino) {
            return;
        }
        let Some(inode) = self.inodes.remove(&ino) else {
            return;
        };
        self.streams.remove(&StreamKey::File(ino));
        for e in &inode.extents {
            self.zones[e.zone as usize].live -= e.bytes;
        }
        let mut zones: Vec<u32> = inode.extents.iter().map(|e| e.zone).collect();
        zones.sort_unstable();
        zones.dedup();
        for z in zones {
            // A reset cannot fail for a written data zone; if the device refuses (a failed zone),
            // the zone simply stays as it is.
            let _ = self.reset_if_dead(at, z);
        }
        if self.meta.inodes.contains_key(&ino) {
            self.pending.push(Record::InodeFree { ino });
        }
    }

    /// Appends `records` (and pending ones) to the journal; returns when they are durable.
    pub fn commit(&mut self, at: Nanos, records: Vec<Record>) -> Result<Nanos> {
        let mut all = std::mem::take(&mut self.pending);
        all.extend(records);
        if self.next_ino > self.meta.next_ino {
            all.push(Record::NextIno { next: self.next_ino });
        }
        if all.is_empty() {
            return Ok(at);
        }
        for r in &all {
            self.meta.apply(r);
        }
        let before = (self.journal.pages_written, self.journal.resets);
        let done = self.journal.commit(&mut self.dev, at, &all, &self.meta)?;
        self.stats.fs_metadata_bytes += (self.journal.pages_written - before.0) * self.page_size as u64;
        self.counters.metadata_resets += self.journal.resets - before.1;
        Ok(done)
    }
}

fn corrupt(what: String) -> FsError {
    FsError::Io { op: "mount", path: String::new(), source: std::io::Error::new(std::io::ErrorKind::InvalidData, what) }
}

impl State {
    /// Checks the invariants between inodes, zones and the device: every inode's extents hold its
    /// device bytes, lie below their zone's write pointer in data zones, and never overlap; every
    /// zone's live bytes are the sum of the extents in it. For tests.
    pub fn check_consistency(&self) -> std::result::Result<(), String> {
        let ps = self.page_size as u64;
        let mut live = vec![0u64; self.zones.len()];
        let mut owner: std::collections::HashMap<(u32, u64), u64> = std::collections::HashMap::new();
        for (&ino, i) in &self.inodes {
            let sum: u64 = i.extents.iter().map(|e| e.bytes).sum();
            if sum != i.dev_len || i.dev_len + i.buf.len() as u64 != i.len || i.synced_len > i.len {
                return Err(format!(
                    "inode {ino}: extents {sum} B, dev_len {}, buffer {} B, len {}, synced {}",
                    i.dev_len,
                    i.buf.len(),
                    i.len,
                    i.synced_len
                ));
            }
            for e in &i.extents {
                if e.zone < self.first_data_zone || e.zone as usize >= self.zones.len() || e.bytes == 0 {
                    return Err(format!("inode {ino}: bad extent {e:?}"));
                }
                let (_, wp) = self.zone_state(e.zone);
                if e.start as u64 + e.pages(ps) > wp {
                    return Err(format!("inode {ino}: extent {e:?} past the write pointer {wp}"));
                }
                live[e.zone as usize] += e.bytes;
                for p in e.start as u64..e.start as u64 + e.pages(ps) {
                    if let Some(other) = owner.insert((e.zone, p), ino) {
                        return Err(format!("zone {} page {p} held by inodes {other} and {ino}", e.zone));
                    }
                }
            }
        }
        for (z, u) in self.zones.iter().enumerate() {
            if u.live != live[z] {
                return Err(format!("zone {z}: {} live bytes recorded, {} in extents", u.live, live[z]));
            }
        }
        Ok(())
    }
}
