//! A hash-indexed key-value SSD: a key-value SSD design of one's own (`kvssd::KvDevice`),
//! selected with `--engine hash-kv` or `[engine] name = "hash-kv"`.
//!
//! The firmware keeps a hash table of every key in device DRAM and stores each pair in whole
//! pages of flashkv's page-mapped FTL ([`BlockSsd`]) inside the device: a pair is
//! `[key length u32][value length u32][key][value]`, padded to pages that need not be adjacent.
//! A store writes the new pages and trims the old ones; a retrieve reads the pair's pages; `exist`
//! and `delete` of an absent key answer from DRAM. There is no write buffer: every store
//! programs at least a page, which is what a small value costs without one (compare PLSC's and
//! KVFTL's packing). The FTL underneath does GC as for a block SSD. DRAM holds the whole index;
//! a power cut is not modelled.

use std::collections::HashMap;

use flashsim::{BlockSsd, Cause, Ftl, HostLabel, Media, MediaConfig, Nanos, SsdConfig};
use kvssd::{Completed, DeviceWork, KvDevice, KvError};

/// The design's name on the command line and in results.
pub const NAME: &str = "hash-kv";

const HEADER: usize = 8;
const MAX_KEY: usize = 255;
const MAX_VALUE: usize = 2 << 20;

pub struct HashKv {
    ftl: BlockSsd,
    /// Each key's pages (LPNs) and value length.
    index: HashMap<Vec<u8>, (Vec<u32>, usize)>,
    /// Free LPNs, the lowest on top.
    free: Vec<u32>,
}

impl HashKv {
    /// A device on `media`, with the block SSD's default spare factor and greedy GC inside.
    pub fn new(media: &MediaConfig) -> kvssd::Result<HashKv> {
        let mut cfg = SsdConfig::new(media.geometry.clone(), media.timing.clone());
        cfg.media = media.clone();
        let ftl = BlockSsd::new(cfg)?;
        let free = (0..ftl.user_pages() as u32).rev().collect();
        Ok(HashKv { ftl, index: HashMap::new(), free })
    }

    /// Trims a pair's pages and gives them back.
    fn release(&mut self, at: Nanos, lpns: Vec<u32>) -> kvssd::Result<Nanos> {
        let mut done = at;
        for l in lpns {
            done = done.max(self.ftl.trim(at, l as u64, 1)?);
            self.free.push(l);
        }
        Ok(done)
    }
}

impl KvDevice for HashKv {
    fn name(&self) -> &str {
        NAME
    }

    fn max_key_size(&self) -> usize {
        MAX_KEY
    }

    fn max_value_size(&self) -> usize {
        MAX_VALUE
    }

    // The trait's `store`, `retrieve`, `delete` and `exist` check keys and values against
    // `max_key_size` and `max_value_size` before these run.
    fn store_valid(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> kvssd::Result<Completed<()>> {
        let ps = self.ftl.page_size() as usize;
        let mut record = Vec::with_capacity(HEADER + key.len() + value.len() + ps);
        record.extend_from_slice(&(key.len() as u32).to_le_bytes());
        record.extend_from_slice(&(value.len() as u32).to_le_bytes());
        record.extend_from_slice(key);
        record.extend_from_slice(value);
        record.resize(record.len().div_ceil(ps) * ps, 0);
        let pages = record.len() / ps;
        // The old pages are trimmed only after the new ones hold the pair, so room is checked first.
        if pages > self.free.len() {
            return Err(KvError::DeviceFull { op: "store", plane: 0 });
        }
        let lpns: Vec<u32> = (0..pages).map(|_| self.free.pop().expect("checked")).collect();
        let mut done = at;
        for (page, &l) in record.chunks(ps).zip(&lpns) {
            done = done.max(self.ftl.write(at, l as u64, page, HostLabel::Unlabelled)?);
        }
        if let Some((old, _)) = self.index.insert(key.to_vec(), (lpns, value.len())) {
            done = done.max(self.release(done, old)?);
        }
        Ok(Completed { done, value: () })
    }

    fn retrieve_valid(&mut self, at: Nanos, key: &[u8]) -> kvssd::Result<Completed<Option<Vec<u8>>>> {
        let Some((lpns, len)) = self.index.get(key).cloned() else {
            return Ok(Completed { done: at, value: None });
        };
        let ps = self.ftl.page_size() as usize;
        let mut record = vec![0; lpns.len() * ps];
        let mut done = at;
        for (page, &l) in record.chunks_mut(ps).zip(&lpns) {
            done = done.max(self.ftl.read(at, l as u64, page, HostLabel::Unlabelled)?);
        }
        let start = HEADER + key.len();
        Ok(Completed { done, value: Some(record[start..start + len].to_vec()) })
    }

    fn delete_valid(&mut self, at: Nanos, key: &[u8]) -> kvssd::Result<Completed<()>> {
        match self.index.remove(key) {
            Some((lpns, _)) => Ok(Completed { done: self.release(at, lpns)?, value: () }),
            None => Err(KvError::key_not_found(key, at)),
        }
    }

    fn exist_valid(&mut self, at: Nanos, key: &[u8]) -> kvssd::Result<Completed<bool>> {
        Ok(Completed { done: at, value: self.index.contains_key(key) })
    }

    fn describe(&self) -> String {
        format!("hash-kv: a DRAM hash index over a page-mapped FTL, {} user pages", self.ftl.user_pages())
    }

    fn media(&self) -> &Media {
        self.ftl.media()
    }

    fn work(&self) -> DeviceWork {
        let gc = self.ftl.media().counters().cause(Cause::Gc);
        DeviceWork { gc_moved_pages: gc.programs, ..DeviceWork::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashsim::{DataMode, Preset};

    /// The conformance suite every key-value SSD design passes (`kvssd::conformance`: a
    /// `HashMap` model, each request's semantics, key and value limits, a full device,
    /// determinism), on devices built as a run builds them: by name, through the registry.
    #[test]
    fn passes_the_conformance_suite() {
        let mut media = SsdConfig::from_preset(Preset::Femu, Some(64 << 20)).unwrap().media;
        media.store = DataMode::Memory;
        let plugins = crate::registry().unwrap();
        kvssd::conformance::run_all(&|| plugins.build_kv_ssd(NAME, &media).unwrap() as Box<dyn KvDevice>);
    }
}
