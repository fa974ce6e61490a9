//! The names of the engines and FTLs built into flashkv, beside which a plug-in registers its own
//! (`crate::plugins` keeps a registered name from shadowing one of these). Parsing a name, which
//! asks the process's registry too, is the specification's (`spec::engine`, `spec::device`).

/// The engines by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EngineName {
    /// The LSM engine on a file system.
    #[default]
    Lsm,
    /// The PLSC-tree (seed 002).
    Plsc,
    /// Seed 002's baseline, LevelDB inside the device: a bloom filter per SST, an SST's pages
    /// spread over every plane (the default since issue 28); or (`OnePlane`) no filters and an
    /// SST's pages in one plane (our reading before issue 28).
    LsmInDevice,
    LsmInDeviceOnePlane,
    /// KVFTL (seed 004) and its variants.
    Kvftl,
    KvftlSp,
    KvftlNp,
    KvftlWs,
    /// Seed 004's baseline.
    DftlKv,
    /// A key-value SSD design a plug-in registered, by the name the process's registry holds
    /// (`crate::plugins`).
    Plugin(&'static str),
}

impl EngineName {
    pub const BUILT_IN: [EngineName; 9] = [
        EngineName::Lsm,
        EngineName::Plsc,
        EngineName::LsmInDevice,
        EngineName::LsmInDeviceOnePlane,
        EngineName::Kvftl,
        EngineName::KvftlSp,
        EngineName::KvftlNp,
        EngineName::KvftlWs,
        EngineName::DftlKv,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EngineName::Lsm => "lsm",
            EngineName::Plsc => "plsc",
            EngineName::LsmInDevice => "lsm-in-device",
            EngineName::LsmInDeviceOnePlane => "lsm-in-device-one-plane",
            EngineName::Kvftl => "kvftl",
            EngineName::KvftlSp => "kvftl-sp",
            EngineName::KvftlNp => "kvftl-np",
            EngineName::KvftlWs => "kvftl-ws",
            EngineName::DftlKv => "dftl-kv",
            EngineName::Plugin(name) => name,
        }
    }
}

/// The flash translation layer of a simulated block SSD: the built-in page-mapped one
/// ([`flashsim::BlockSsd`]) or a plug-in's (`crate::plugins`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FtlName {
    #[default]
    Page,
    /// A registered FTL, by the name the process's registry holds.
    Plugin(&'static str),
}

impl FtlName {
    pub const BUILT_IN: [&'static str; 1] = ["page"];

    pub fn as_str(self) -> &'static str {
        match self {
            FtlName::Page => "page",
            FtlName::Plugin(name) => name,
        }
    }

    pub fn is_page(&self) -> bool {
        *self == FtlName::Page
    }
}
