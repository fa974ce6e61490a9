//! `flashkv repair DIR`: rebuilds the engine's database in a host directory from the SSTs and WALs
//! found there, when CURRENT or the MANIFEST is lost or damaged (the engine's `Db::repair`: nothing
//! is deleted, unused files go to DIR/lost/), and prints what was kept and dropped. A folder with
//! none of a database's files in it is refused, nothing written (`bench --fs posix:DIR` keeps its
//! database in DIR/db, and DIR itself is not one).

use std::path::Path;
use std::sync::Arc;

use storage::{Env, PosixFs};

use crate::error::{LabError, Result};

pub fn run(dir: &Path) -> Result<()> {
    let dir = std::fs::canonicalize(dir).map_err(LabError::io(dir.to_path_buf(), "find the database directory"))?;
    let (Some(parent), Some(name)) = (dir.parent(), dir.file_name().and_then(|n| n.to_str())) else {
        return Err(LabError::invalid("DIR", format!("{} is not a database directory", dir.display())));
    };
    let fs = Arc::new(PosixFs::new(parent)?);
    let report = lsm::Db::repair(Env::new(fs), name, lsm::Options::default()).map_err(|e| match e {
        // The engine names the folder relative to its parent; the user gave the whole path.
        lsm::Error::NotFound { what, .. } => lsm::Error::NotFound { dir: dir.display().to_string(), what },
        e => e,
    })?;
    println!("{report}");
    Ok(())
}
