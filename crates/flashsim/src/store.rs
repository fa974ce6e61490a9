//! Where page contents live: in memory, in a sparse backing file (devices larger than RAM), or
//! nowhere (metadata-only mode for pure FTL studies).
//!
//! The store is indexed by physical page, so it sees exactly what the NAND sees: a GC relocation
//! copies a page, an erase discards it, a remap touches nothing. A page without kept data reads as
//! "absent", which the device turns into [`FlashError::NoData`]; it never invents bytes.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bits::BitSet;
use crate::error::{FlashError, Result};

/// How the device keeps page data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataMode {
    /// Page contents in RAM.
    Memory,
    /// Page contents in a sparse file at this path (created, truncated to the raw capacity).
    SparseFile(PathBuf),
    /// No contents: reads fail with `NoData`. For FTL studies where only the accounting matters.
    MetadataOnly,
}

pub(crate) enum PageStore {
    Memory(Vec<Option<Arc<[u8]>>>),
    File { file: File, path: PathBuf, page_size: u64, present: BitSet },
    None,
}

impl PageStore {
    pub fn new(mode: &DataMode, pages: u64, page_size: u32) -> Result<PageStore> {
        Ok(match mode {
            DataMode::Memory => PageStore::Memory(vec![None; pages as usize]),
            DataMode::MetadataOnly => PageStore::None,
            DataMode::SparseFile(path) => {
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)
                    .map_err(|e| backing(path, "create", e))?;
                file.set_len(pages * page_size as u64).map_err(|e| backing(path, "set_len", e))?;
                PageStore::File { file, path: path.clone(), page_size: page_size as u64, present: BitSet::new(pages) }
            }
        })
    }

    /// Keeps `data` (exactly one page) as the contents of `ppn`, or forgets it when `None`.
    pub fn put(&mut self, ppn: u32, data: Option<&[u8]>) -> Result<()> {
        match self {
            PageStore::Memory(pages) => pages[ppn as usize] = data.map(Arc::from),
            PageStore::File { file, path, page_size, present } => match data {
                Some(d) => {
                    file.write_all_at(d, ppn as u64 * *page_size).map_err(|e| backing(path, "write", e))?;
                    present.set(ppn, true);
                }
                None => present.set(ppn, false),
            },
            PageStore::None => {}
        }
        Ok(())
    }

    /// Reads `ppn` into `buf`; `Ok(false)` when the page has no kept contents.
    pub fn get(&self, ppn: u32, buf: &mut [u8]) -> Result<bool> {
        match self {
            PageStore::Memory(pages) => match &pages[ppn as usize] {
                Some(d) => {
                    buf.copy_from_slice(d);
                    Ok(true)
                }
                None => Ok(false),
            },
            PageStore::File { file, path, page_size, present } => {
                if !present.get(ppn) {
                    return Ok(false);
                }
                file.read_exact_at(buf, ppn as u64 * *page_size).map_err(|e| backing(path, "read", e))?;
                Ok(true)
            }
            PageStore::None => Ok(false),
        }
    }

    /// Copies the contents of `from` to `to` (a GC relocation).
    pub fn copy(&mut self, from: u32, to: u32, scratch: &mut Vec<u8>) -> Result<()> {
        match self {
            PageStore::Memory(pages) => pages[to as usize] = pages[from as usize].clone(),
            PageStore::File { page_size, .. } => {
                scratch.resize(*page_size as usize, 0);
                let has = self.get(from, scratch)?;
                self.put(to, has.then_some(&scratch[..]))?;
            }
            PageStore::None => {}
        }
        Ok(())
    }

    /// Forgets the contents of `ppn` (its block was erased).
    pub fn discard(&mut self, ppn: u32) {
        match self {
            PageStore::Memory(pages) => pages[ppn as usize] = None,
            PageStore::File { present, .. } => present.set(ppn, false),
            PageStore::None => {}
        }
    }
}

fn backing(path: &Path, op: &'static str, source: std::io::Error) -> FlashError {
    FlashError::Backing { path: path.to_path_buf(), op, source }
}
