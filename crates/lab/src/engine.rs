//! The key-value engine interface the harness drives. The LSM engine implements it now; key-value
//! SSD designs (PLSC-tree, KVFTL) will implement the same trait, so every workload, report and
//! experiment works on all of them.

use lsm::{Db, DbIterator, ReadOptions, WriteOptions};
use storage::Env;

use crate::error::{LabError, Result};
use crate::spec::format_size_in;

/// A key-value store under test.
pub trait KvEngine {
    /// A short description for reports.
    fn describe(&self) -> String;
    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()>;
    /// The value's length if the key exists (the harness needs no copy of the value).
    fn get(&mut self, key: &[u8]) -> Result<Option<usize>>;
    /// Reads up to `len` records from the first key >= `start` (0: position only); returns the
    /// records and bytes read.
    fn scan(&mut self, start: &[u8], len: u64) -> Result<(u64, u64)>;
    /// The bytes of the record after the one the previous `next` read, in key order (the first
    /// key at the first call); `None` past the last key.
    fn next(&mut self) -> Result<Option<u64>>;
    /// Waits until background work (flushes, compactions, GC) is done.
    fn settle(&mut self) -> Result<()>;
    /// Every record in key order, folded into a [`ContentDigest`].
    fn content_digest(&mut self) -> Result<ContentDigest>;
    /// Closes the store (the LSM engine syncs and stops its background work).
    fn close(&mut self) -> Result<()>;
    /// An empty store, as db_bench starts each fill on a destroyed database; the statistics keep
    /// the earlier store's activity.
    fn recreate(&mut self) -> Result<()>;
}

/// A database's contents in two numbers: its records, and a 64-bit FNV-1a hash of every key and
/// value (each length-prefixed) in key order. Runs that must end with the same contents (one
/// workload under different strategies or file systems) are checked by comparing digests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ContentDigest {
    pub records: u64,
    pub fnv1a: u64,
}

impl Default for ContentDigest {
    /// The digest of an empty database.
    fn default() -> Self {
        ContentDigest::new()
    }
}

impl ContentDigest {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;

    pub fn new() -> ContentDigest {
        ContentDigest { records: 0, fnv1a: Self::OFFSET }
    }

    /// Adds the next record (records must come in key order).
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        self.records += 1;
        for part in [key, value] {
            for b in (part.len() as u64).to_le_bytes().iter().chain(part) {
                self.fnv1a = (self.fnv1a ^ *b as u64).wrapping_mul(Self::PRIME);
            }
        }
    }
}

/// The LSM engine (`lsm::Db`).
pub struct LsmEngine {
    env: Env,
    db: Option<Db>,
    options: lsm::Options,
    write: WriteOptions,
    /// The activity of databases destroyed by [`LsmEngine::recreate`].
    history: lsm::DbStats,
    /// Where `next` is (db_bench's readseq), until the phase settles or the database closes.
    cursor: Option<DbIterator>,
}

/// Where the database lives on the stack's file system.
pub const DIR: &str = "db";

impl LsmEngine {
    pub fn open(env: Env, options: lsm::Options, sync: bool) -> Result<LsmEngine> {
        let db = Db::open(env.clone(), DIR, options.clone())?;
        Ok(LsmEngine {
            env,
            db: Some(db),
            options,
            write: WriteOptions { sync },
            history: Default::default(),
            cursor: None,
        })
    }

    fn db(&self) -> Result<&Db> {
        self.db.as_ref().ok_or(LabError::Engine(lsm::Error::Closed))
    }

    /// The engine's statistics, the destroyed databases' activity included (none once closed),
    /// for the result's `lsm` section.
    pub fn stats(&self) -> Option<lsm::DbStats> {
        self.db.as_ref().map(|d| {
            let mut s = d.stats();
            s.add_history(&self.history);
            s
        })
    }
}

impl KvEngine for LsmEngine {
    fn describe(&self) -> String {
        let o = &self.options;
        let kib = |bytes: u64| format_size_in(bytes, 1 << 10, "KiB");
        let bloom = match o.bloom_bits_per_key {
            Some(bits) => format!("bloom {bits} bits per key"),
            None => "no bloom filter".to_string(),
        };
        format!(
            "lsm ({} compaction, write buffer {}, SST {}, block {} B{}, remap {}, {bloom})",
            o.compaction,
            kib(o.write_buffer_size as u64),
            kib(o.max_file_size),
            o.block_size,
            if o.align_blocks { ", aligned blocks" } else { "" },
            o.remap,
        )
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let w = self.write;
        Ok(self.db()?.put(&w, key, value)?)
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.db()?.get(&ReadOptions::default(), key)?.map(|v| v.len()))
    }

    fn scan(&mut self, start: &[u8], len: u64) -> Result<(u64, u64)> {
        let mut it = self.db()?.iter(&ReadOptions::default())?;
        it.seek(start);
        let (mut n, mut bytes) = (0u64, 0u64);
        while it.valid() && n < len {
            bytes += (it.key().len() + it.value().len()) as u64;
            n += 1;
            it.next();
        }
        it.status()?;
        Ok((n, bytes))
    }

    fn next(&mut self) -> Result<Option<u64>> {
        if self.cursor.is_none() {
            let mut it = self.db()?.iter(&ReadOptions::default())?;
            it.seek_to_first();
            self.cursor = Some(it);
        }
        let it = self.cursor.as_mut().expect("a cursor was just opened");
        if !it.valid() {
            it.status()?;
            return Ok(None);
        }
        let bytes = (it.key().len() + it.value().len()) as u64;
        it.next();
        Ok(Some(bytes))
    }

    fn settle(&mut self) -> Result<()> {
        // The phase is over: its cursor no longer holds the tables it read.
        self.cursor = None;
        Ok(self.db()?.wait_for_background()?)
    }

    fn content_digest(&mut self) -> Result<ContentDigest> {
        let mut it = self.db()?.iter(&ReadOptions::default())?;
        it.seek_to_first();
        let mut d = ContentDigest::new();
        while it.valid() {
            d.add(it.key(), it.value());
            it.next();
        }
        it.status()?;
        Ok(d)
    }

    /// Destroys the database and opens a fresh one, as db_bench does before each fill; the
    /// statistics keep the destroyed database's activity.
    fn recreate(&mut self) -> Result<()> {
        self.cursor = None;
        if let Some(db) = self.db.take() {
            self.history.add_history(&db.stats());
            db.close()?;
        }
        lsm::destroy(&**self.env.fs(), DIR)?;
        self.db = Some(Db::open(self.env.clone(), DIR, self.options.clone())?);
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        self.cursor = None;
        match self.db.take() {
            Some(db) => Ok(db.close()?),
            None => Ok(()),
        }
    }
}
