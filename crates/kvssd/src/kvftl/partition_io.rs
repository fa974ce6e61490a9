//! A partition's bytes in flash pages: written through its size's page buffer or programmed
//! directly, read back from the buffer or the pages that hold them, invalidated along a chain.

use flashsim::{Cause, Nanos, PageWrite};

use super::block::{Entry, Loc, Stream};
use super::Kvftl;
use crate::error::{KvError, Result};

impl Kvftl {
    /// Partition 2^p at `loc` holds `data` (at most 2^p bytes; the rest of the partition is
    /// zero): copies it into its page buffer, programming the page when this is its last
    /// partition, or programs its pages directly. Returns when the data is programmed (`ready`
    /// when it is only buffered).
    pub(super) fn write_partition(
        &mut self,
        ready: Nanos,
        loc: Loc,
        p: u8,
        stream: Stream,
        data: &[u8],
        cause: Cause,
    ) -> Result<Nanos> {
        let ps = self.geo.ps;
        let ppb = self.geo.ppb;
        if self.blocks.is_internal(p) {
            let per_page = self.blocks.per_page(p);
            let slot = (loc.pid % per_page) as usize;
            let buf = self.buffers.page_mut(p, stream);
            buf[slot << p..(slot << p) + data.len()].copy_from_slice(data);
            if slot as u32 + 1 < per_page {
                return Ok(ready);
            }
            return self.program_buffer(ready, loc.block, p, stream, loc.pid / per_page, cause);
        }
        let (first, pages) = self.blocks.pages_of(p, loc.pid);
        let mut last = Vec::new();
        let full = data.len() / ps;
        if full < pages as usize && data.len() % ps != 0 {
            last = data[full * ps..].to_vec();
            last.resize(ps, 0);
        }
        let zero = &self.zero;
        let writes: Vec<PageWrite> = (0..pages as usize)
            .map(|i| {
                let bytes: &[u8] = if i < full {
                    &data[i * ps..(i + 1) * ps]
                } else if i == full && !last.is_empty() {
                    &last
                } else {
                    zero
                };
                PageWrite { ppn: loc.block * ppb + first + i as u32, ready, owner: p as u32, data: Some(bytes) }
            })
            .collect();
        Ok(self.media.program(&writes, cause)?)
    }

    /// Programs page `page` of `block` from the buffer of (p, stream) and clears the buffer; the
    /// page is invalidated at once when none of its partitions is valid any more.
    pub(super) fn program_buffer(
        &mut self,
        ready: Nanos,
        block: u32,
        p: u8,
        stream: Stream,
        page: u32,
        cause: Cause,
    ) -> Result<Nanos> {
        let ppn = block * self.geo.ppb + page;
        let buf = self.buffers.page_mut(p, stream);
        let done = self.media.program(&[PageWrite { ppn, ready, owner: p as u32, data: Some(&*buf) }], cause)?;
        buf.fill(0);
        if self.blocks.data(block).page_valid[page as usize] == 0 {
            self.media.invalidate(ppn);
        }
        Ok(done)
    }

    /// Partition `loc` (2^p bytes) becomes invalid; pages left with no valid partition are
    /// invalidated in the media when programmed. Returns its entry.
    pub(super) fn invalidate_partition(&mut self, loc: Loc) -> Result<Entry> {
        let (entry, page, pages) = self.blocks.remove_valid(loc).ok_or_else(|| KvError::Inconsistent {
            reason: format!("partition {} of block {} is on a chain but not valid", loc.pid, loc.block),
        })?;
        let wp = self.media.write_pointer(loc.block);
        for pg in page..page + pages {
            if pg < wp {
                self.media.invalidate(loc.block * self.geo.ppb + pg);
            }
        }
        Ok(entry)
    }

    /// Invalidates the chain of partitions from `first` (Alg. 3: pre = NULL along the chain).
    /// Returns its partitions, in order, and their bytes; their table entries are still to be
    /// accessed ([`Kvftl::touch_all`]), which is the operation's only cost.
    pub(super) fn unlink_chain(&mut self, first: Option<Loc>) -> Result<(Vec<Loc>, u64)> {
        let (mut locs, mut bytes, mut cur) = (Vec::new(), 0, first);
        while let Some(loc) = cur {
            bytes += 1u64 << self.blocks.data(loc.block).p;
            cur = self.invalidate_partition(loc)?.next;
            locs.push(loc);
        }
        Ok((locs, bytes))
    }

    /// Accesses the table entries of `locs` (dirty) from `t`; returns when the table I/O is done.
    pub(super) fn touch_all(&mut self, t: Nanos, locs: &[Loc]) -> Result<Nanos> {
        let mut t = t;
        for &loc in locs {
            t = self.touch(t, loc, true)?;
        }
        Ok(t)
    }

    /// Reads the first `n` bytes of partition 2^p at `loc` into `out`, from `ready`. Returns when
    /// they are read (`ready` for a buffer read, unless buffer reads are off).
    pub(super) fn read_partition(
        &mut self,
        ready: Nanos,
        loc: Loc,
        p: u8,
        n: usize,
        out: &mut Vec<u8>,
    ) -> Result<Nanos> {
        let ps = self.geo.ps;
        let base = loc.block * self.geo.ppb;
        let (first, _) = self.blocks.pages_of(p, loc.pid);
        if self.blocks.is_internal(p) {
            let off = ((loc.pid % self.blocks.per_page(p)) as usize) << p;
            if first >= self.media.write_pointer(loc.block) {
                let stream = self.blocks.data(loc.block).stream;
                let buf = self.buffers.page(p, stream).ok_or_else(|| KvError::Inconsistent {
                    reason: format!("partition {} of block {} is neither programmed nor buffered", loc.pid, loc.block),
                })?;
                out.extend_from_slice(&buf[off..off + n]);
                if !self.cfg.buffer_reads {
                    // The experiment of buffer reads off: the read is charged as if from flash.
                    self.counts.charged_buffer_reads += 1;
                    return Ok(self.media.read_as_if_programmed(loc.block, ready, Cause::HOST)?);
                }
                self.counts.buffer_reads += 1;
                return Ok(ready);
            }
            let done = self.media.read(&[(base + first, ready)], Cause::HOST)?;
            self.page_contents(base + first)?;
            out.extend_from_slice(&self.page[off..off + n]);
            return Ok(done);
        }
        let pages = n.div_ceil(ps) as u32;
        self.reads.clear();
        self.reads.extend((first..first + pages).map(|pg| (base + pg, ready)));
        let done = self.media.read(&self.reads, Cause::HOST)?;
        for i in 0..pages {
            let ppn = base + first + i;
            let take = (n - i as usize * ps).min(ps);
            if take == ps {
                let at = out.len();
                out.resize(at + ps, 0);
                self.contents_into(ppn, at, out)?;
            } else {
                self.page_contents(ppn)?;
                out.extend_from_slice(&self.page[..take]);
            }
        }
        Ok(done)
    }

    /// Copies page `ppn` into `self.page`.
    pub(super) fn page_contents(&mut self, ppn: u32) -> Result<()> {
        if !self.media.contents(ppn, &mut self.page)? {
            return Err(KvError::Inconsistent { reason: format!("PPN {ppn} keeps no contents") });
        }
        Ok(())
    }

    pub(super) fn contents_into(&self, ppn: u32, at: usize, out: &mut [u8]) -> Result<()> {
        if !self.media.contents(ppn, &mut out[at..at + self.geo.ps])? {
            return Err(KvError::Inconsistent { reason: format!("PPN {ppn} keeps no contents") });
        }
        Ok(())
    }
}
