//! How a device specification reads in reports and run headers: its shape (capacity, page size,
//! NAND timings) and a one-line description (`simulated femu SSD, 16 GiB, ...`). The words go into
//! results (`RunResult::device`), so they change only with what they describe.

use super::device::{DeviceSpec, FsKind, ZoneGc};
use super::named::{format_size, format_size_in, Named};
use super::names::FtlName;

impl DeviceSpec {
    /// `, CAPACITY, P KiB pages, NAND READ/PROGRAM/ERASE/TRANSFER` of a simulated device.
    pub fn shape(&self) -> String {
        let mut shape = self.capacity.map_or(String::new(), |c| format!(", {}", format_size(c.0)));
        if let (Some(_), Ok((g, _))) = (self.geometry.blocks_per_plane, self.chip()) {
            // Sized by its geometry: the size and the geometry that makes it.
            shape += &format!(
                ", {} ({} channels x {} chips x {} dies x {} planes x {} blocks x {} pages)",
                format_size(g.total_pages() * g.page_size as u64),
                g.channels,
                g.chips_per_channel,
                g.dies_per_chip,
                g.planes_per_die,
                g.blocks_per_plane,
                g.pages_per_block
            );
        }
        if let Ok((g, timing)) = self.chip() {
            shape +=
                &format!(", {} pages, NAND {}", format_size_in(g.page_size as u64, 1 << 10, "KiB"), timing.label());
        }
        shape
    }

    /// A short description for reports.
    pub fn describe(&self) -> String {
        let cache = match self.page_cache.0 {
            0 => String::new(),
            b => format!(", {} page cache", format_size(b)),
        };
        self.describe_device() + &cache
    }

    fn describe_device(&self) -> String {
        let capacity = self.shape();
        let preset = self.preset.name();
        match self.fs {
            FsKind::Sim => {
                let ftl = match self.ftl {
                    FtlName::Page => String::new(),
                    f => format!(", {} FTL", f.as_str()),
                };
                format!("simulated {preset} SSD{capacity} (spare factor {}{ftl})", self.spare_factor)
            }
            FsKind::Zone => {
                let zone = match self.zoned_config() {
                    Ok(c) => format!("{} zones", format_size_in(c.zone_size, 1 << 20, "MiB")),
                    Err(_) => "zones".into(),
                };
                let gc = match self.zone_gc {
                    ZoneGc::Off => "no GC".to_string(),
                    ZoneGc::AtFreeZones(n) => format!("GC at {n} free"),
                };
                format!(
                    "simulated {preset} ZNS SSD{capacity}, {zone}, ZoneFs {} placement, {gc}",
                    self.zone_policy.name()
                )
            }
            FsKind::XfsLoop => {
                format!("a reflink XFS on a loop device ({})", format_size(self.xfs_image_bytes()))
            }
            _ => self.fs.name(),
        }
    }
}
