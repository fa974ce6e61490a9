//! A block-mapped FTL, as the first flash cards and SSDs had: a whole FTL on flashkv's media
//! layer (`flashsim::Ftl`), selected with `--ftl block-map` or `[device] ftl = "block-map"`.
//!
//! A logical block (pages-per-block LPNs) maps to one physical block, and logical page `k` always
//! sits at page `k` of it. NAND pages of a block are programmed in order, so a write at the
//! block's write pointer appends; any other write merges: a free block takes the old block's
//! pages before `k` (by copyback when it is in the same plane), the new page, and the old pages
//! after it, and the old block is erased. Pages never written inside a merged range are
//! programmed empty (padding), as the in-order rule requires. Merges are the FTL's own work
//! (`Cause::Gc`). The map is a table in DRAM whose entries are also in the blocks' OOB areas,
//! so a power cut loses nothing (its rebuild time is not modelled).
//!
//! It shows what page mapping buys: random writes cost a block merge each.

use std::collections::VecDeque;

use flashsim::ftl::{check_range, whole_pages};
use flashsim::media::NO_OWNER;
use flashsim::{Cause, FlashError, Ftl, FtlCounters, HostLabel, HostOp, Media, Nanos, PageWrite, SsdConfig};

/// The FTL's name on the command line and in results.
pub const NAME: &str = "block-map";

#[derive(Debug)]
pub struct BlockMap {
    media: Media,
    ppb: u32,
    /// Physical block of each logical block.
    map: Vec<Option<u32>>,
    /// Whether each logical page holds data (not trimmed, not padding).
    present: Vec<bool>,
    /// Erased blocks, per plane.
    free: Vec<VecDeque<u32>>,
    counters: FtlCounters,
    copyback: bool,
}

impl BlockMap {
    /// The device `cfg` describes: its geometry and timings, and as many logical blocks as its
    /// spare factor leaves (at least one block per plane stays free for merges).
    pub fn new(cfg: &SsdConfig) -> flashsim::Result<BlockMap> {
        let media = Media::new(&cfg.media)?;
        let g = media.geometry().clone();
        let planes = g.total_planes() as u64;
        let logical = ((g.total_blocks() as f64 * (1.0 - cfg.spare_factor)) as u64).min(g.total_blocks() - planes);
        if logical == 0 {
            return Err(FlashError::InvalidConfig { field: "spare_factor", reason: "leaves no logical block".into() });
        }
        let mut free = vec![VecDeque::new(); planes as usize];
        for b in 0..g.total_blocks() as u32 {
            free[g.plane_of_block(b) as usize].push_back(b);
        }
        Ok(BlockMap {
            ppb: g.pages_per_block,
            map: vec![None; logical as usize],
            present: vec![false; (logical * g.pages_per_block as u64) as usize],
            free,
            counters: FtlCounters::default(),
            copyback: cfg.copyback,
            media,
        })
    }

    /// A free block, in `plane` when it has one (logical block `i`'s home plane on first use).
    fn take_free(&mut self, plane: usize) -> flashsim::Result<u32> {
        let planes = self.free.len();
        (0..planes)
            .find_map(|i| self.free[(plane + i) % planes].pop_front())
            .ok_or(FlashError::DeviceFull { op: "merge", lpn: 0 })
    }

    /// Writes logical page `lpn` (data `data`, or none kept) issued at `at`.
    fn write_page(&mut self, at: Nanos, lpn: u64, data: Option<&[u8]>, label: HostLabel) -> flashsim::Result<Nanos> {
        let (lb, k) = ((lpn / self.ppb as u64) as usize, (lpn % self.ppb as u64) as u32);
        let first = lb as u32 * self.ppb;
        let ppb = self.ppb;
        let page = move |b: u32, i: u32| b * ppb + i;
        self.present[lpn as usize] = true;
        if let Some(old) = self.map[lb] {
            if self.media.write_pointer(old) == k {
                let w = PageWrite { ppn: page(old, k), ready: at, owner: lpn as u32, data };
                return self.media.program(&[w], Cause::Host(label));
            }
        }
        // A merge into a free block: the old block's plane first, so that copies are copybacks.
        let plane = match self.map[lb] {
            Some(old) => self.media.geometry().plane_of_block(old) as usize,
            None => lb % self.free.len(),
        };
        let new = self.take_free(plane)?;
        let old = self.map[lb];
        let old_written = old.map_or(0, |b| self.media.write_pointer(b));
        let end = (k + 1).max(old_written);
        let mut done = at;
        for i in 0..end {
            let dst = page(new, i);
            let t = if i == k {
                if let Some(b) = old.filter(|_| i < old_written) {
                    self.media.invalidate(page(b, i));
                }
                self.media.program(&[PageWrite { ppn: dst, ready: at, owner: lpn as u32, data }], Cause::Host(label))?
            } else if let Some(b) = old.filter(|&b| i < old_written && self.media.is_valid(page(b, i))) {
                self.media.relocate(at, page(b, i), dst, first + i, self.copyback, Cause::Gc)?
            } else {
                let t =
                    self.media.program(&[PageWrite { ppn: dst, ready: at, owner: NO_OWNER, data: None }], Cause::Gc)?;
                self.media.invalidate(dst);
                t
            };
            done = done.max(t);
        }
        if let Some(b) = old {
            // The host waits for its page and the copies, not for the erase.
            self.media.erase(done, b, Cause::Gc)?;
            let plane = self.media.geometry().plane_of_block(b) as usize;
            self.free[plane].push_back(b);
        }
        self.map[lb] = Some(new);
        Ok(done)
    }

    fn write_pages(
        &mut self,
        at: Nanos,
        lpn: u64,
        pages: u64,
        data: Option<&[u8]>,
        label: HostLabel,
    ) -> flashsim::Result<Nanos> {
        check_range(lpn, pages, self.user_pages())?;
        self.media.arrive(at);
        let ps = self.page_size() as usize;
        let mut done = at;
        for i in 0..pages {
            let d = data.map(|d| &d[i as usize * ps..(i as usize + 1) * ps]);
            done = done.max(self.write_page(at, lpn + i, d, label)?);
        }
        self.counters.host_write_pages += pages;
        self.media.record_latency(HostOp::Write, done - at);
        Ok(done)
    }

    /// Reads the present pages of `lpn..lpn+pages` (timing and counts).
    fn read_pages(&mut self, at: Nanos, lpn: u64, pages: u64, label: HostLabel) -> flashsim::Result<Nanos> {
        let reads: Vec<(u32, Nanos)> = (lpn..lpn + pages).filter_map(|l| self.ppn(l).map(|p| (p, at))).collect();
        let done = self.media.read(&reads, Cause::Host(label))?.max(at);
        self.counters.host_read_pages += pages;
        self.media.record_latency(HostOp::Read, done - at);
        Ok(done)
    }

    /// The physical page holding logical page `lpn`, if it holds data.
    fn ppn(&self, lpn: u64) -> Option<u32> {
        let lb = (lpn / self.ppb as u64) as usize;
        self.map[lb].filter(|_| self.present[lpn as usize]).map(|b| b * self.ppb + (lpn % self.ppb as u64) as u32)
    }
}

impl Ftl for BlockMap {
    fn name(&self) -> &str {
        NAME
    }

    fn user_pages(&self) -> u64 {
        self.present.len() as u64
    }

    fn media(&self) -> &Media {
        &self.media
    }

    fn media_mut(&mut self) -> &mut Media {
        &mut self.media
    }

    fn write(&mut self, at: Nanos, lpn: u64, data: &[u8], label: HostLabel) -> flashsim::Result<Nanos> {
        let pages = whole_pages(data.len(), self.page_size(), "write")?;
        self.write_pages(at, lpn, pages, Some(data), label)
    }

    fn write_no_data(&mut self, at: Nanos, lpn: u64, pages: u64, label: HostLabel) -> flashsim::Result<Nanos> {
        self.write_pages(at, lpn, pages, None, label)
    }

    fn read(&mut self, at: Nanos, lpn: u64, buf: &mut [u8], label: HostLabel) -> flashsim::Result<Nanos> {
        let pages = whole_pages(buf.len(), self.page_size(), "read")?;
        self.contents(lpn, buf)?;
        self.media.arrive(at);
        self.read_pages(at, lpn, pages, label)
    }

    fn contents(&self, lpn: u64, buf: &mut [u8]) -> flashsim::Result<()> {
        let pages = whole_pages(buf.len(), self.page_size(), "read")?;
        check_range(lpn, pages, self.user_pages())?;
        let ps = self.page_size() as usize;
        for (i, out) in buf.chunks_mut(ps).enumerate() {
            let l = lpn + i as u64;
            match self.ppn(l) {
                None => out.fill(0),
                Some(p) if !self.media.contents(p, out)? => return Err(FlashError::NoData { lpn: l }),
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn read_no_data(&mut self, at: Nanos, lpn: u64, pages: u64, label: HostLabel) -> flashsim::Result<Nanos> {
        check_range(lpn, pages, self.user_pages())?;
        self.media.arrive(at);
        self.read_pages(at, lpn, pages, label)
    }

    fn trim(&mut self, at: Nanos, lpn: u64, pages: u64) -> flashsim::Result<Nanos> {
        check_range(lpn, pages, self.user_pages())?;
        for l in lpn..lpn + pages {
            if let Some(p) = self.ppn(l) {
                self.media.invalidate(p);
            }
            self.present[l as usize] = false;
        }
        self.counters.host_trim_pages += pages;
        Ok(at)
    }

    fn is_mapped(&self, lpn: u64) -> bool {
        lpn < self.user_pages() && self.ppn(lpn).is_some()
    }

    fn power_cut(&mut self) {
        // The map is in the OOB areas too; nothing volatile is lost.
        self.counters.power_cuts += 1;
    }

    fn ftl_counters(&self) -> FtlCounters {
        self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashsim::{DataMode, Preset};

    /// Random writes, trims and reads against a byte vector per page: every read returns what the
    /// model holds, and a random overwrite of a full block costs a whole block of programs.
    #[test]
    fn reads_return_the_last_write_and_overwrites_merge_blocks() {
        let mut cfg = SsdConfig::from_preset(Preset::Femu, Some(64 << 20)).unwrap();
        cfg.media.store = DataMode::Memory;
        let mut ftl = BlockMap::new(&cfg).unwrap();
        let (ps, user) = (ftl.page_size() as usize, ftl.user_pages());
        let mut model = vec![vec![0u8; ps]; user as usize];
        let mut x: u64 = 7;
        let mut next = |n: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut buf = vec![0u8; ps];
        for i in 0..4000u64 {
            let lpn = next(user);
            match next(10) {
                0 => {
                    ftl.trim(0, lpn, 1).unwrap();
                    model[lpn as usize].fill(0);
                }
                1..=6 => {
                    let page = vec![(i % 251) as u8 + 1; ps];
                    ftl.write(0, lpn, &page, HostLabel::Unlabelled).unwrap();
                    model[lpn as usize] = page;
                }
                _ => {
                    ftl.read(0, lpn, &mut buf, HostLabel::Unlabelled).unwrap();
                    assert_eq!(buf, model[lpn as usize], "LPN {lpn} after {i} operations");
                }
            }
        }
        // A full block, then one page of it again: a merge programs the whole block.
        let ppb = ftl.geometry().pages_per_block as u64;
        let page = vec![9u8; ps * ppb as usize];
        ftl.write(0, 0, &page, HostLabel::Unlabelled).unwrap();
        let before = ftl.media().counters().programs;
        ftl.write(0, 3, &page[..ps], HostLabel::Unlabelled).unwrap();
        assert_eq!(ftl.media().counters().programs - before, ppb);
        assert!(matches!(ftl.write(0, user, &page[..ps], HostLabel::Unlabelled), Err(FlashError::OutOfRange { .. })));
    }
}
