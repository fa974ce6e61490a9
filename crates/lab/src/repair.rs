//! `flashkv repair DIR`: rebuilds the engine's database in a host directory from the SSTs and WALs
//! found there, when CURRENT or the MANIFEST is lost or damaged (the engine's `Db::repair`: nothing
//! is deleted, unused files go to DIR/lost/), and prints what was kept and dropped.

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
    let report = lsm::Db::repair(Env::new(fs), name, lsm::Options::default())?;
    println!("{report}");
    Ok(())
}
