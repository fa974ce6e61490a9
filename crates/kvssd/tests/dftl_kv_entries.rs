//! DFTL-KV's cached mapping table of single entries (the entries reading, the default) under a RAM
//! budget, on the paper's chip (the `kvftl` preset at 1 GiB: 16 KiB pages, 65,536 LPAs spread
//! over the GTD's 208 translation pages, 316 entries each), checked against a model of its rules:
//! the map as a `HashMap` (LPA -> key and value size), the cache as a list of (LPA, dirty) in LRU
//! order, and the translation-page traffic they imply, access by access; every value read back is
//! its key's latest (the PPNs of a get come from the CMT's entries).

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use flashsim::Nanos;
use kvssd::dftl_kv::CMT_ENTRY_BYTES;
use kvssd::{DftlKv, DftlKvConfig, KvDevice};
use proptest::prelude::*;

const READ: Nanos = 115_000 + 163_840;
const PROGRAM: Nanos = 1_600_000 + 163_840;
const GIB: u64 = 1 << 30;
const PAGE: usize = 16 * 1024;
const LPAS: u32 = (GIB / PAGE as u64) as u32;
/// Entries per translation page: the LPAs over the GTD's 208 entries.
const EPP: u32 = LPAS.div_ceil(208);

fn dftl(entries: u64) -> DftlKv {
    let cfg = DftlKvConfig { ram_budget: Some(entries * CMT_ENTRY_BYTES), ..DftlKvConfig::preset(Some(GIB)).unwrap() };
    DftlKv::new(cfg).unwrap()
}

/// The rules, written plainly.
struct Model {
    cap: usize,
    /// The map: LPA -> (key, value size).
    map: HashMap<u32, (u32, usize)>,
    used: BTreeSet<u32>,
    cursor: u32,
    keys: BTreeMap<u32, Vec<u32>>,
    /// Cached entries, least recently used first, with their dirty bits.
    lru: Vec<(u32, bool)>,
    /// Translation pages ever written (a store reads the old copy of those first; a miss loads
    /// only those).
    written: BTreeSet<u32>,
    /// Translation pages loaded by the current request.
    loaded: Vec<u32>,
    hits: u64,
    misses: u64,
    loads: u64,
    stores: u64,
    store_reads: u64,
}

impl Model {
    fn new(cap: usize) -> Model {
        Model {
            cap,
            map: HashMap::new(),
            used: BTreeSet::new(),
            cursor: 0,
            keys: BTreeMap::new(),
            lru: Vec::new(),
            written: BTreeSet::new(),
            loaded: Vec::new(),
            hits: 0,
            misses: 0,
            loads: 0,
            stores: 0,
            store_reads: 0,
        }
    }

    fn store(&mut self, tp: u32) {
        self.stores += 1;
        if !self.written.insert(tp) {
            self.store_reads += 1;
        }
    }

    /// Whether `lpa` is cached (then moved to the most recent end, dirty if `dirty`); a miss
    /// makes room first: each dirty victim's page is stored, cleaning that page's other entries.
    fn access(&mut self, lpa: u32, dirty: bool) -> bool {
        if let Some(i) = self.lru.iter().position(|e| e.0 == lpa) {
            let (_, d) = self.lru.remove(i);
            self.lru.push((lpa, d || dirty));
            self.hits += 1;
            return true;
        }
        self.misses += 1;
        while self.lru.len() >= self.cap {
            let (victim, d) = self.lru.remove(0);
            if d {
                let tp = victim / EPP;
                for e in self.lru.iter_mut().filter(|e| e.0 / EPP == tp) {
                    e.1 = false;
                }
                self.store(tp);
            }
        }
        self.lru.push((lpa, dirty));
        false
    }

    fn read(&mut self, lpa: u32) {
        if !self.access(lpa, false) {
            let tp = lpa / EPP;
            if !self.loaded.contains(&tp) {
                self.loaded.push(tp);
                self.loads += u64::from(self.written.contains(&tp));
            }
        }
    }

    /// A key's LPAs as its KGTD bitmap finds them: by translation page, in the value's order
    /// within one.
    fn kgtd_order(lpas: &[u32]) -> Vec<u32> {
        let mut v = lpas.to_vec();
        v.sort_by_key(|&l| l / EPP);
        v
    }

    fn unmap(&mut self, key: u32) {
        let Some(lpas) = self.keys.remove(&key) else { return };
        let order = Model::kgtd_order(&lpas);
        for &lpa in &order {
            self.read(lpa);
        }
        for &lpa in &order {
            self.used.remove(&lpa);
            self.map.remove(&lpa);
        }
        for &lpa in &order {
            self.access(lpa, true);
        }
    }

    fn put(&mut self, key: u32, len: usize) {
        self.loaded.clear();
        self.unmap(key);
        let mut lpas = Vec::new();
        while lpas.len() < len.div_ceil(PAGE) {
            let lpa = self.cursor;
            self.cursor = (self.cursor + 1) % LPAS;
            if self.used.insert(lpa) {
                lpas.push(lpa);
            }
        }
        for &lpa in &lpas {
            self.map.insert(lpa, (key, len));
            self.access(lpa, true);
        }
        self.keys.insert(key, lpas);
    }

    fn get(&mut self, key: u32) {
        self.loaded.clear();
        for lpa in Model::kgtd_order(&self.keys.get(&key).cloned().unwrap_or_default()) {
            self.read(lpa);
        }
    }

    fn delete(&mut self, key: u32) {
        self.loaded.clear();
        self.unmap(key);
    }

    fn flush(&mut self) {
        let mut tps: Vec<u32> = self.lru.iter().filter(|e| e.1).map(|e| e.0 / EPP).collect();
        tps.sort_unstable();
        tps.dedup();
        for e in &mut self.lru {
            e.1 = false;
        }
        for tp in tps {
            self.store(tp);
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Put(u32, usize),
    Get(u32),
    Delete(u32),
    Flush,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u32..200, 1usize..=3 * PAGE).prop_map(|(k, len)| Op::Put(k, len)),
        8 => (0u32..200).prop_map(Op::Get),
        2 => (0u32..200).prop_map(Op::Delete),
        1 => Just(Op::Flush),
    ]
}

/// A value that names its key and version, so a stale PPN shows.
fn value(key: u32, version: usize, len: usize) -> Vec<u8> {
    (0..len).map(|i| (key as usize * 31 + version * 7 + i / PAGE) as u8).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Hits, misses, loads, stores (and the old copies they read), access by access, and their
    /// die time at the end; every get returns its key's latest value (no GC: the writes stay far
    /// below the device; GC's moves are the small-device tests').
    #[test]
    fn loads_and_stores_match_the_model(
        entries in 1u64..=40,
        ops in prop::collection::vec(op(), 1..1200),
    ) {
        let mut dev = dftl(entries);
        let mut m = Model::new(entries as usize);
        let mut latest: HashMap<u32, Vec<u8>> = HashMap::new();
        let mut t = 0;
        for (seq, op) in ops.iter().enumerate() {
            match *op {
                Op::Put(k, len) => {
                    let v = value(k, seq, len);
                    t = dev.store(t, &k.to_be_bytes(), &v).unwrap().done;
                    latest.insert(k, v);
                    m.put(k, len);
                }
                Op::Get(k) => {
                    let got = dev.retrieve(t, &k.to_be_bytes()).unwrap();
                    prop_assert_eq!(got.value.as_ref(), latest.get(&k), "{:?}", op);
                    t = got.done;
                    m.get(k);
                }
                Op::Delete(k) => {
                    let present = latest.remove(&k).is_some();
                    let r = dev.delete(t, &k.to_be_bytes());
                    prop_assert_eq!(r.is_ok(), present);
                    if let Ok(c) = r {
                        t = c.done;
                    }
                    m.delete(k);
                }
                Op::Flush => {
                    t = dev.flush(t).unwrap();
                    m.flush();
                }
            }
            let s = dev.stats().mapping;
            prop_assert_eq!(
                (s.hits, s.misses, s.loads, s.stores, s.store_reads),
                (m.hits, m.misses, m.loads, m.stores, m.store_reads),
                "after {:?}", op
            );
        }
        dev.flush(t).unwrap();
        m.flush();
        dev.check().unwrap();
        let s = dev.stats();
        prop_assert_eq!(s.gc_runs, 0);
        prop_assert_eq!((s.mapping.loads, s.mapping.stores, s.mapping.store_reads), (m.loads, m.stores, m.store_reads));
        prop_assert_eq!(s.mapping.load_ns, m.loads * READ, "a load is one page read");
        prop_assert_eq!(
            s.mapping.store_ns,
            m.stores * PROGRAM + m.store_reads * READ,
            "a store is a program, after a read of the old copy when there is one"
        );
        prop_assert!(s.cached_entries <= entries);
        prop_assert_eq!(s.cmt_bytes, m.map.len() as u64 * CMT_ENTRY_BYTES, "the live map's entries");
    }
}

/// The static RAM of Table II: KGTD 26 B per key and a GTD of 208 entries, 832 B (the paper's).
#[test]
fn the_gtd_is_the_papers_832_bytes() {
    let mut dev = dftl(100);
    let mut t = 0;
    for k in 0..50u32 {
        t = dev.store(t, &k.to_be_bytes(), &value(k, 0, 1000)).unwrap().done;
    }
    let s = dev.stats();
    assert_eq!((s.kgtd_bytes, s.gtd_bytes, s.static_ram_bytes), (50 * 26, 832, 50 * 26 + 832));
    assert_eq!(dev.config().translation_pages(), 208);
}
