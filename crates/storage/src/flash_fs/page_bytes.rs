//! A cached page's bytes (`cache`): kept whole, or not kept at all when they are the device's
//! (`PageCacheConfig::clean_on_device`).
//!
//! A page the engine appends to, a page with dirty bytes and a partial page (a file's tail) are
//! whole. A clean whole page of a cache that leaves its clean pages on the device keeps no bytes:
//! its bytes are the placement's at that page of the file (written back, or read from there), and
//! a hit reads them from the device's store without time or counts. Whatever the form, the bytes
//! read back are the bytes put in: the file system keeps a page's cached bytes equal to the file's.

#[derive(Debug)]
pub(super) enum PageBytes {
    Whole(Vec<u8>),
    /// A clean whole page whose bytes the device holds.
    OnDevice,
}

impl Default for PageBytes {
    fn default() -> Self {
        PageBytes::Whole(Vec::new())
    }
}

impl PageBytes {
    /// The page's length (`page_size` for a page on the device: only whole pages go there).
    pub fn len(&self, page_size: usize) -> usize {
        match self {
            PageBytes::Whole(v) => v.len(),
            PageBytes::OnDevice => page_size,
        }
    }

    /// Empties the page; a whole page keeps its buffer for the next one (as a kernel keeps its
    /// page frames).
    pub fn clear(&mut self) {
        match self {
            PageBytes::Whole(v) => v.clear(),
            PageBytes::OnDevice => *self = PageBytes::default(),
        }
    }

    /// The page's bytes become `data`, whole.
    pub fn set(&mut self, data: &[u8]) {
        match self {
            PageBytes::Whole(v) => {
                v.clear();
                v.extend_from_slice(data);
            }
            PageBytes::OnDevice => *self = PageBytes::Whole(data.to_vec()),
        }
    }

    /// The page whole, to append to; `None` for a page on the device, which no append reaches
    /// (appends land past a file's last whole page).
    pub fn whole_mut(&mut self) -> Option<&mut Vec<u8>> {
        match self {
            PageBytes::Whole(v) => Some(v),
            PageBytes::OnDevice => None,
        }
    }

    /// The page's bytes are the device's from now on: its own are dropped (a buffer kept for
    /// the next page instead doubled a run's peak memory, for no time measured).
    pub fn leave_on_device(&mut self) {
        *self = PageBytes::OnDevice;
    }

    /// The page's bytes, when it keeps them.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            PageBytes::Whole(v) => Some(v),
            PageBytes::OnDevice => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_keeps_its_bytes_until_it_is_left_on_the_device() {
        let mut p = PageBytes::default();
        p.set(&[1, 2, 3]);
        p.whole_mut().expect("whole").push(4);
        assert_eq!((p.bytes(), p.len(4096)), (Some(&[1u8, 2, 3, 4][..]), 4));
        p.leave_on_device();
        assert_eq!((p.bytes(), p.len(4096)), (None, 4096));
        assert!(p.whole_mut().is_none(), "no append reaches a page on the device");
        p.set(&[5, 0, 6]);
        assert_eq!(p.bytes(), Some(&[5u8, 0, 6][..]));
        p.leave_on_device();
        p.clear();
        assert_eq!(p.len(4096), 0);
    }
}
