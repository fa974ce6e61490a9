//! The physical layer every key-value device of this crate shares: "devices are FTLs on one media
//! layer; one mechanism, many policies".
//!
//! - [`Flash`]: flashsim's [`Media`] with per-plane space management ([`space`]: free blocks, one
//!   open block per plane, a GC reserve), and a way to program one round of pages (at most one
//!   per plane, programmed together) that first makes room on each plane.
//! - GC ([`gc`]): greedy victim choice and relocation of the victim's valid pages (copyback inside
//!   their plane), with the device fixing its own maps through the [`Owners`] callback.
//! - [`record`]: the `klen | key | vlen | value` record every device writes (and its tombstone).
//!
//! Policies stay in the devices: when GC runs (thresholds), which planes a device's data goes to,
//! what a page's owner is (a PLSC UST, an LSM SST), and what the flash operations are charged to.

pub mod gc;
pub mod record;
pub mod space;

use flashsim::{Cause, Media, Nanos, PageWrite};

use crate::error::{KvError, Result};
pub use gc::{GcWork, Owners};
use space::Space;

/// The NAND array under a device, and where its pages go.
pub struct Flash {
    pub media: Media,
    pub space: Space,
    /// GC moves pages by copyback (inside their plane, no channel transfer).
    pub copyback: bool,
}

impl Flash {
    pub fn new(media: Media, copyback: bool) -> Flash {
        let space = Space::new(media.geometry());
        Flash { media, space, copyback }
    }

    pub fn page_size(&self) -> usize {
        self.media.geometry().page_size as usize
    }

    /// Programs `data` (at most one page per plane, zero-padded to whole pages) as page `i` on
    /// `planes[i]`, all ready at `at` so that the media overlaps them, each page's OOB naming
    /// `owner`. A plane without a page for data first gets one from GC (its die then queues the
    /// page behind GC's work); `gc` adds up what GC did. Returns the PPNs, in `data`'s order, and
    /// when the last page is programmed.
    #[allow(clippy::too_many_arguments)]
    pub fn program_round(
        &mut self,
        at: Nanos,
        planes: &[usize],
        data: &[u8],
        owner: u32,
        owners: &mut impl Owners,
        cause: Cause,
        op: &'static str,
        gc: &mut GcWork,
    ) -> Result<(Vec<u32>, Nanos)> {
        let ps = self.page_size();
        debug_assert_eq!(data.len().div_ceil(ps), planes.len(), "one page per plane");
        for &plane in planes {
            *gc += self.make_room(plane, owners, at, op)?;
        }
        let mut ppns = Vec::with_capacity(planes.len());
        for &plane in planes {
            ppns.push(self.space.take(plane, false).ok_or(KvError::DeviceFull { op, plane: plane as u32 })?);
        }
        let mut padded = data.to_vec();
        padded.resize(planes.len() * ps, 0);
        let writes: Vec<PageWrite> = ppns
            .iter()
            .zip(padded.chunks(ps))
            .map(|(&ppn, page)| PageWrite { ppn, ready: at, owner, data: Some(page) })
            .collect();
        let done = self.media.program(&writes, cause)?;
        Ok((ppns, done))
    }

    /// Reads pages `ppns` (all ready at `at`), charged to `cause`, and returns their contents back
    /// to back and when the last page is out.
    pub fn read_pages(&mut self, at: Nanos, ppns: &[u32], cause: Cause) -> Result<(Vec<u8>, Nanos)> {
        let ps = self.page_size();
        let reads: Vec<(u32, Nanos)> = ppns.iter().map(|&ppn| (ppn, at)).collect();
        let done = self.media.read(&reads, cause)?;
        let mut bytes = vec![0u8; ppns.len() * ps];
        for (&ppn, page) in ppns.iter().zip(bytes.chunks_mut(ps)) {
            if !self.media.contents(ppn, page)? {
                return Err(KvError::Inconsistent { reason: format!("PPN {ppn} keeps no contents") });
            }
        }
        Ok((bytes, done))
    }
}
