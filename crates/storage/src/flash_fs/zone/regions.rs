//! The zone placement's metadata regions for the journal: the first `metadata_zones` zones, as
//! ZenFS keeps its metadata.

use flashsim::{HostLabel, Nanos, ZoneState, ZonedSsd};

use super::Extent;
use crate::error::Result;
use crate::flash_fs::journal::MetaRegions;

fn device_error(op: &'static str, e: flashsim::FlashError) -> crate::error::FsError {
    crate::flash_fs::device_error(op, "(metadata)", e)
}

/// The metadata zones, in roll-over order.
pub struct ZoneRegions {
    pub(crate) zones: Vec<u32>,
}

impl MetaRegions for ZoneRegions {
    type Device = ZonedSsd;
    type Item = Extent;

    fn count(&self) -> usize {
        self.zones.len()
    }

    fn page_size(&self, dev: &ZonedSsd) -> usize {
        dev.page_size() as usize
    }

    fn capacity_pages(&self, dev: &ZonedSsd) -> u64 {
        dev.zone_capacity_pages()
    }

    fn written_pages(&self, dev: &ZonedSsd, i: usize) -> Result<u64> {
        Ok(dev.zone(self.zones[i]).map_err(|e| device_error("mount", e))?.write_pointer)
    }

    fn read(&self, dev: &mut ZonedSsd, at: Nanos, i: usize, page: u64, buf: &mut [u8]) -> Result<Nanos> {
        dev.read(at, self.zones[i], page, buf, HostLabel::FsMetadata).map_err(|e| device_error("mount", e))
    }

    fn write(&self, dev: &mut ZonedSsd, at: Nanos, i: usize, page: u64, data: &[u8]) -> Result<Nanos> {
        dev.write(at, self.zones[i], page, data, HostLabel::FsMetadata).map_err(|e| device_error("sync", e))
    }

    fn reset(&self, dev: &mut ZonedSsd, at: Nanos, i: usize) -> Result<Option<Nanos>> {
        let zone = self.zones[i];
        if dev.zone(zone).map_err(|e| device_error("sync", e))?.state == ZoneState::Empty {
            return Ok(None);
        }
        dev.reset_labelled(at, zone, HostLabel::FsMetadata).map(Some).map_err(|e| device_error("sync", e))
    }

    /// Finishes a partly written zone, so that it stops holding an active-zone token.
    fn close(&self, dev: &mut ZonedSsd, i: usize) -> Result<()> {
        let zone = self.zones[i];
        let state = dev.zone(zone).map_err(|e| device_error("sync", e))?.state;
        if !matches!(state, ZoneState::Empty | ZoneState::Full) {
            dev.finish(zone).map_err(|e| device_error("sync", e))?;
        }
        Ok(())
    }
}
