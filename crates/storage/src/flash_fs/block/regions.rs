//! The block placement's metadata regions for the journal: two runs of LPNs at the start of the
//! device, each written from its start in order and trimmed when the journal rolls over.

use flashsim::{Ftl, HostLabel, Nanos};

use super::LpnRun;
use crate::error::Result;
use crate::flash_fs::journal::MetaRegions;

fn device_error(op: &'static str, e: flashsim::FlashError) -> crate::error::FsError {
    crate::flash_fs::device_error(op, "(metadata)", e)
}

/// Two regions of `pages` LPNs each: `0..pages` and `pages..2 * pages`.
pub struct BlockRegions {
    pub(crate) pages: u32,
}

impl BlockRegions {
    pub const COUNT: u32 = 2;

    fn base(&self, i: usize) -> u64 {
        i as u64 * self.pages as u64
    }
}

impl MetaRegions for BlockRegions {
    type Device = Box<dyn Ftl>;
    type Item = LpnRun;

    fn count(&self) -> usize {
        Self::COUNT as usize
    }

    fn page_size(&self, dev: &Box<dyn Ftl>) -> usize {
        dev.page_size() as usize
    }

    fn capacity_pages(&self, _dev: &Box<dyn Ftl>) -> u64 {
        self.pages as u64
    }

    /// Up to the region's last mapped page: a block device has no write pointer, but a region is
    /// only written in order and trimmed whole.
    fn written_pages(&self, dev: &Box<dyn Ftl>, i: usize) -> Result<u64> {
        let base = self.base(i);
        Ok((0..self.pages as u64).rev().find(|&p| dev.is_mapped(base + p)).map_or(0, |p| p + 1))
    }

    fn read(&self, dev: &mut Box<dyn Ftl>, at: Nanos, i: usize, page: u64, buf: &mut [u8]) -> Result<Nanos> {
        dev.read(at, self.base(i) + page, buf, HostLabel::FsMetadata).map_err(|e| device_error("mount", e))
    }

    fn write(&self, dev: &mut Box<dyn Ftl>, at: Nanos, i: usize, page: u64, data: &[u8]) -> Result<Nanos> {
        dev.write(at, self.base(i) + page, data, HostLabel::FsMetadata).map_err(|e| device_error("sync", e))
    }

    fn reset(&self, dev: &mut Box<dyn Ftl>, at: Nanos, i: usize) -> Result<Option<Nanos>> {
        if self.written_pages(dev, i)? == 0 {
            return Ok(None);
        }
        dev.trim(at, self.base(i), self.pages as u64).map(Some).map_err(|e| device_error("sync", e))
    }

    fn close(&self, _dev: &mut Box<dyn Ftl>, _i: usize) -> Result<()> {
        Ok(())
    }
}
