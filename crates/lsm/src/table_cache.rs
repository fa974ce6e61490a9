//! Open SST readers, at most `max_open_files` of them, least recently used evicted first. Readers
//! are shared (`Arc<Table>`), so evicting one only closes it when no iterator still uses it.
//!
//! The tables opened without their damaged filter block ([`Table::filter_damage`]) are remembered
//! until their file is deleted, so the database's statistics can name them.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use storage::Fs;

use crate::cache::BlockCache;
use crate::error::Result;
use crate::filename;
use crate::iter::InternalIterator;
use crate::options::{Options, ReadOptions};
use crate::sst::{Table, TableIterator};

pub struct TableCache {
    fs: Arc<dyn Fs>,
    dir: String,
    options: Options,
    blocks: Arc<BlockCache>,
    inner: Mutex<Lru>,
}

#[derive(Default)]
struct Lru {
    tables: HashMap<u64, (Arc<Table>, u64)>,
    clock: u64,
    /// File number -> the error that left its filter out.
    damaged_filters: BTreeMap<u64, String>,
}

impl TableCache {
    pub fn new(fs: Arc<dyn Fs>, dir: &str, options: &Options) -> TableCache {
        TableCache {
            fs,
            dir: dir.to_string(),
            blocks: Arc::new(BlockCache::new(options.block_cache_bytes)),
            options: options.clone(),
            inner: Mutex::new(Lru::default()),
        }
    }

    pub fn block_cache(&self) -> &Arc<BlockCache> {
        &self.blocks
    }

    /// The reader of SST `number` (of `size` bytes), opening it if needed.
    pub fn table(&self, number: u64, size: u64) -> Result<Arc<Table>> {
        {
            let mut lru = self.lock();
            lru.clock += 1;
            let clock = lru.clock;
            if let Some((t, stamp)) = lru.tables.get_mut(&number) {
                *stamp = clock;
                return Ok(Arc::clone(t));
            }
        }
        let path = filename::table_name(&self.dir, number);
        let file = self.options.open_table(&*self.fs, &path)?;
        let table = Table::open(Arc::from(file), size, number, &self.options, Some(Arc::clone(&self.blocks)))?;
        let mut lru = self.lock();
        if let Some(e) = table.filter_damage() {
            lru.damaged_filters.insert(number, e.to_string());
        }
        if lru.tables.len() >= self.options.max_open_files.max(1) {
            // Deterministic victim: the least recently used (stamps are unique).
            if let Some(victim) = lru.tables.iter().min_by_key(|(_, (_, s))| *s).map(|(n, _)| *n) {
                lru.tables.remove(&victim);
            }
        }
        let clock = lru.clock;
        lru.tables.insert(number, (Arc::clone(&table), clock));
        Ok(table)
    }

    pub fn iter(&self, number: u64, size: u64, read_opts: &ReadOptions) -> Result<TableIterator> {
        Ok(self.table(number, size)?.iter(read_opts))
    }

    /// Looks `ikey` up in SST `number`: the first entry >= `ikey` in the block that could hold it.
    pub fn get(
        &self,
        number: u64,
        size: u64,
        ikey: &[u8],
        read_opts: &ReadOptions,
    ) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        self.table(number, size)?.get(ikey, read_opts)
    }

    /// Forgets a deleted SST and its cached blocks.
    pub fn evict(&self, number: u64) {
        let mut lru = self.lock();
        lru.tables.remove(&number);
        lru.damaged_filters.remove(&number);
        drop(lru);
        self.blocks.erase_file(number);
    }

    /// The SSTs still in the database that were opened without their damaged filter block: the
    /// error of each, in file-number order.
    pub fn damaged_filters(&self) -> Vec<String> {
        self.lock().damaged_filters.values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Lru> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Boxes a table iterator as an internal iterator.
pub fn boxed(it: TableIterator) -> Box<dyn InternalIterator> {
    Box::new(it)
}
