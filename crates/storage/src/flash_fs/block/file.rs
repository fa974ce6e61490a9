//! A file on the block placement: its pages on the device, its length, its in-memory last page,
//! and the durable snapshot of its last `sync`; and the operations that move bytes between files
//! and the device.
//!
//! Invariants: `tail.len() == len % page_size`; while `cow` is false `synced_pages` is a prefix of
//! `pages` (files grow by appending; the only page rewritten in place is the last, partly filled
//! one, whose synced prefix does not change); a clone over pages of the durable snapshot puts them
//! at fresh LPNs and sets `cow`.

use flashsim::{Ftl, HostLabel, Nanos, SimClock, Wait};

use super::{BlockPlacement, DURABLE, VOLATILE};
use crate::error::{FsError, Result};
use crate::flash_fs::records::Record;
use crate::flash_fs::state::State;
use crate::flash_fs::{device_error, label, CloneSpan, FileInode};
use crate::fs::WriteHint;

#[derive(Debug, Clone, Default)]
pub struct Inode {
    pub pages: Vec<u32>,
    pub len: u64,
    pub tail: Vec<u8>,
    pub tail_on_device: bool,
    pub synced_pages: Vec<u32>,
    pub synced_len: u64,
    pub cow: bool,
    /// LPNs reserved for this file's next appends.
    pub window: Option<(u32, u32)>,
    /// Completion time of the latest device write of this file.
    pub pending: Nanos,
    pub hint: WriteHint,
}

impl FileInode for Inode {
    fn new(hint: WriteHint) -> Inode {
        Inode { hint, tail_on_device: true, ..Default::default() }
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn hint(&self) -> WriteHint {
        self.hint
    }
}

impl Inode {
    /// A file as a remount finds it: its durable pages and length.
    pub fn restored(pages: Vec<u32>, len: u64) -> Inode {
        Inode { synced_pages: pages.clone(), pages, len, synced_len: len, tail_on_device: true, ..Default::default() }
    }

    /// Reads the partly filled last page back into memory after a remount.
    pub fn load_tail(&mut self, dev: &mut dyn Ftl, clock: &SimClock, page_size: usize, ino: u64) -> Result<()> {
        let rem = (self.len % page_size as u64) as usize;
        if rem == 0 {
            return Ok(());
        }
        let idx = (self.len / page_size as u64) as usize;
        let Some(&lpn) = self.pages.get(idx) else {
            return Err(FsError::Io {
                op: "mount",
                path: format!("inode {ino}"),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, "length past the last page"),
            });
        };
        let mut page = vec![0u8; page_size];
        // A remounted file has lost its hint: its tail is read unlabelled.
        let done = dev
            .read(clock.now(), lpn as u64, &mut page, HostLabel::Unlabelled)
            .map_err(|e| device_error("mount", "", e))?;
        clock.wait(done, Wait::Read);
        page.truncate(rem);
        self.tail = page;
        Ok(())
    }
}

/// The runs of consecutive LPNs of `pages`, for the journal.
pub(crate) fn runs(pages: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &p in pages {
        match out.last_mut() {
            Some((s, n)) if *s + *n == p => *n += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

/// A fresh LPN for `ino`: from its window, right after its last page, or from a new window.
fn alloc_page(st: &mut State<BlockPlacement>, ino: u64, op: &'static str, path: &str, window: u32) -> Result<u32> {
    let (from_window, last) = {
        let i = st.inode(ino, op, path)?;
        let w = i.window.take();
        if let Some((s, n)) = w {
            i.window = (n > 1).then_some((s + 1, n - 1));
        }
        (w.map(|(s, _)| s), i.pages.last().copied())
    };
    let lpn = match from_window {
        Some(l) => l,
        None => match last.filter(|&l| st.place.alloc.take_exact(l + 1)) {
            Some(l) => l + 1,
            None => {
                let (s, n) = st.place.alloc.take_run(window.max(1)).ok_or_else(|| FsError::NoSpace {
                    op,
                    path: path.to_string(),
                    detail: "no free pages left in the simulated device".to_string(),
                })?;
                st.inode(ino, op, path)?.window = (n > 1).then_some((s + 1, n - 1));
                s
            }
        },
    };
    st.place.flags[lpn as usize] |= VOLATILE;
    Ok(lpn)
}

/// Programs page `idx` of `ino` (in place when it already has an LPN, else on a fresh one).
fn write_page(
    st: &mut State<BlockPlacement>,
    clock: &SimClock,
    ino: u64,
    path: &str,
    idx: usize,
    data: &[u8],
    window: u32,
) -> Result<()> {
    let existing = st.inode(ino, "append", path)?.pages.get(idx).copied();
    let lpn = match existing {
        Some(l) => l,
        None => {
            let l = alloc_page(st, ino, "append", path, window)?;
            st.inode(ino, "append", path)?.pages.push(l);
            l
        }
    };
    let hint = st.inode(ino, "append", path)?.hint;
    let done = st.dev.write(clock.now(), lpn as u64, data, label(hint)).map_err(|e| device_error("append", path, e))?;
    let i = st.inode(ino, "append", path)?;
    i.pending = i.pending.max(done);
    st.stats.add_write(hint, st.page_size as u64);
    Ok(())
}

pub(crate) fn append(
    st: &mut State<BlockPlacement>,
    clock: &SimClock,
    ino: u64,
    path: &str,
    data: &[u8],
    window: u32,
) -> Result<()> {
    let ps = st.page_size;
    let mut rest = data;
    while !rest.is_empty() {
        let i = st.inode(ino, "append", path)?;
        let idx = (i.len / ps as u64) as usize;
        if i.tail.is_empty() && rest.len() >= ps {
            write_page(st, clock, ino, path, idx, &rest[..ps], window)?;
            let i = st.inode(ino, "append", path)?;
            i.len += ps as u64;
            i.tail_on_device = true;
            rest = &rest[ps..];
            continue;
        }
        let n = (ps - i.tail.len()).min(rest.len());
        i.tail.extend_from_slice(&rest[..n]);
        i.len += n as u64;
        i.tail_on_device = false;
        rest = &rest[n..];
        if i.tail.len() == ps {
            let mut page = std::mem::take(&mut i.tail);
            write_page(st, clock, ino, path, idx, &page, window)?;
            // The emptied buffer is the next tail: no allocation per page.
            page.clear();
            let i = st.inode(ino, "append", path)?;
            i.tail_on_device = true;
            i.tail = page;
        }
    }
    Ok(())
}

/// Reads `buf.len()` bytes at `offset`, inside the file (the caller checked): pages from the
/// device, the last partly filled one from memory; returns when the device completes.
pub(crate) fn read(
    st: &mut State<BlockPlacement>,
    clock: &SimClock,
    ino: u64,
    path: &str,
    offset: u64,
    buf: &mut [u8],
) -> Result<Nanos> {
    let n = buf.len() as u64;
    timed(st, clock, ino, path, offset, n, Some(buf))
}

/// The time and counts of [`read`] of `n` bytes at `offset`, without the bytes.
pub(crate) fn read_timing(
    st: &mut State<BlockPlacement>,
    clock: &SimClock,
    ino: u64,
    path: &str,
    offset: u64,
    n: u64,
) -> Result<Nanos> {
    timed(st, clock, ino, path, offset, n, None)
}

/// A read of `n` bytes at `offset` on the device's clock, into `buf` or (without) its time and
/// counts only.
fn timed(
    st: &mut State<BlockPlacement>,
    clock: &SimClock,
    ino: u64,
    path: &str,
    offset: u64,
    n: u64,
    buf: Option<&mut [u8]>,
) -> Result<Nanos> {
    let ps = st.page_size as u64;
    let at = clock.now();
    let mut done = at;
    let hint = label(st.inode(ino, "read_at", path)?.hint);
    let with_data = buf.is_some();
    walk(st, ino, path, offset, n, buf, |st, lpn, into| {
        let t = if with_data { st.dev.read(at, lpn, into, hint)? } else { st.dev.read_no_data(at, lpn, 1, hint)? };
        done = done.max(t);
        st.stats.read_bytes += ps;
        Ok(())
    })?;
    Ok(done)
}

/// The file's bytes at `offset` as [`read`] gives them, without time or counts (the page cache's
/// clean pages, which it does not keep).
pub(crate) fn contents(
    st: &mut State<BlockPlacement>,
    ino: u64,
    path: &str,
    offset: u64,
    buf: &mut [u8],
) -> Result<()> {
    let n = buf.len() as u64;
    walk(st, ino, path, offset, n, Some(buf), |st, lpn, into| st.dev.contents(lpn, into))
}

/// Goes over the file's `n` bytes at `offset` (inside the file) into `buf` when there is one:
/// each page through `device` (its LPN, one page, and where it goes: empty without `buf`), the
/// last partly filled one from memory.
fn walk(
    st: &mut State<BlockPlacement>,
    ino: u64,
    path: &str,
    offset: u64,
    n: u64,
    mut buf: Option<&mut [u8]>,
    mut device: impl FnMut(&mut State<BlockPlacement>, u64, &mut [u8]) -> flashsim::Result<()>,
) -> Result<()> {
    let ps = st.page_size as u64;
    let i = st.inode(ino, "read_at", path)?;
    let n = n as usize;
    let tail_idx = (i.len % ps != 0).then_some(i.len / ps);
    let first = offset / ps;
    let last = (offset + n as u64 - 1) / ps;
    let mut page = vec![0u8; ps as usize];
    let pages: Vec<u32> = (first..=last).filter(|&p| Some(p) != tail_idx).map(|p| i.pages[p as usize]).collect();
    let tail = i.tail.clone();
    let mut k = 0;
    for p in first..=last {
        let page_start = p * ps;
        let from = offset.max(page_start);
        let to = (offset + n as u64).min(page_start + ps);
        let Some(buf) = buf.as_deref_mut() else {
            if Some(p) != tail_idx {
                device(st, pages[k] as u64, &mut []).map_err(|e| device_error("read_at", path, e))?;
                k += 1;
            }
            continue;
        };
        let dst = &mut buf[(from - offset) as usize..(to - offset) as usize];
        let src: &[u8] = if Some(p) == tail_idx {
            &tail
        } else {
            let lpn = pages[k];
            k += 1;
            // A page the buffer holds whole is read straight into it (no bounce copy).
            let whole = dst.len() == ps as usize;
            let into: &mut [u8] = if whole { dst } else { &mut page };
            device(st, lpn as u64, into).map_err(|e| device_error("read_at", path, e))?;
            if whole {
                continue;
            }
            &page
        };
        let s = &src[(from - page_start) as usize..(to - page_start) as usize];
        dst.copy_from_slice(s);
    }
    Ok(())
}

/// Makes `ino`'s current bytes its durable snapshot and journals it; the caller's lane waits for
/// the file's writes and the journal.
pub(crate) fn sync(st: &mut State<BlockPlacement>, clock: &SimClock, ino: u64, path: &str, window: u32) -> Result<()> {
    let ps = st.page_size;
    let (needs_tail, idx, mut page) = {
        let i = st.inode(ino, "sync", path)?;
        let mut page = i.tail.clone();
        page.resize(ps, 0);
        (!i.tail.is_empty() && !i.tail_on_device, (i.len / ps as u64) as usize, page)
    };
    if needs_tail {
        write_page(st, clock, ino, path, idx, &page, window)?;
        st.inode(ino, "sync", path)?.tail_on_device = true;
    }
    page.clear();
    let i = st.inode(ino, "sync", path)?;
    let mut freed = Vec::new();
    if i.cow {
        let old = std::mem::take(&mut i.synced_pages);
        let now = i.pages.clone();
        for &l in &old {
            st.place.flags[l as usize] &= !DURABLE;
        }
        for &l in &now {
            st.place.flags[l as usize] |= DURABLE;
        }
        freed.extend(old.into_iter().filter(|&l| st.place.flags[l as usize] == 0));
    } else {
        let from = i.synced_pages.len().min(i.pages.len());
        let new: Vec<u32> = i.pages[from..].to_vec();
        for &l in &new {
            st.place.flags[l as usize] |= DURABLE;
        }
    }
    let i = st.inode(ino, "sync", path)?;
    i.synced_pages = i.pages.clone();
    i.synced_len = i.len;
    i.cow = false;
    let record = Record::Inode { ino, len: i.len, hint: WriteHint::None, items: runs(&i.pages) };
    let pending = i.pending;
    let at = clock.now();
    freed.sort_unstable();
    freed.dedup();
    st.release_pages(at, &freed);
    let done = st.commit(at, vec![record])?;
    // The journal record is written beside the data: the lane waits for the data, then the rest.
    clock.wait(pending, Wait::Write);
    clock.wait(done, Wait::Metadata);
    Ok(())
}

/// `clone_range` on checked arguments: fresh LPNs for the destination pages, each a device remap
/// of its source page.
pub(crate) fn clone_pages(st: &mut State<BlockPlacement>, clock: &SimClock, span: &CloneSpan) -> Result<()> {
    let CloneSpan { src, src_offset, dst, dst_offset, len } = *span;
    let ps = st.page_size as u64;
    let n = (len / ps) as usize;
    let s0 = (src_offset / ps) as usize;
    let d0 = (dst_offset / ps) as usize;
    let src_pages: Vec<u32> = st.inode(src.0, "clone_range", src.1)?.pages[s0..s0 + n].to_vec();
    let window = 256;
    let at = clock.now();
    let mut freed = Vec::new();
    let mut pairs = Vec::with_capacity(n);
    for (k, &s) in src_pages.iter().enumerate() {
        let new = alloc_page(st, dst.0, "clone_range", dst.1, window)?;
        pairs.push((s, new));
        let idx = d0 + k;
        let State { inodes, place, .. } = &mut *st;
        let flags = &mut place.flags;
        let i =
            inodes.get_mut(&dst.0).ok_or_else(|| FsError::NotFound { op: "clone_range", path: dst.1.to_string() })?;
        if idx < i.pages.len() {
            let old = std::mem::replace(&mut i.pages[idx], new);
            flags[old as usize] &= !VOLATILE;
            if flags[old as usize] & DURABLE != 0 {
                i.cow = true;
            } else {
                freed.push(old);
            }
        } else {
            i.pages.push(new);
        }
    }
    // Remap in runs where both sides are consecutive.
    let mut k = 0;
    while k < pairs.len() {
        let mut m = k + 1;
        while m < pairs.len() && pairs[m].0 == pairs[m - 1].0 + 1 && pairs[m].1 == pairs[m - 1].1 + 1 {
            m += 1;
        }
        st.dev
            .remap(at, pairs[k].0 as u64, pairs[k].1 as u64, (m - k) as u64)
            .map_err(|e| device_error("clone_range", dst.1, e))?;
        k = m;
    }
    let i = st.inode(dst.0, "clone_range", dst.1)?;
    if i.len % ps != 0 {
        let tail_idx = (i.len / ps) as usize;
        if (d0..d0 + n).contains(&tail_idx) {
            i.tail.clear();
            i.tail_on_device = true;
        }
    }
    i.len = i.len.max(dst_offset + len);
    let hint = i.hint;
    st.stats.add_clone(hint, len);
    freed.sort_unstable();
    st.release_pages(at, &freed);
    Ok(())
}

/// Returns the unused part of `ino`'s allocation window (the writer closed).
pub(crate) fn release_window(st: &mut State<BlockPlacement>, ino: u64) {
    if let Some((s, n)) = st.inodes.get_mut(&ino).and_then(|i| i.window.take()) {
        st.place.alloc.release(s, n);
    }
}
