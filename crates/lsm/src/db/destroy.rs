//! `destroy`: removes a database, as LevelDB's `DestroyDB` (db_bench starts each fill benchmark on a
//! destroyed database).
//!
//! Contract: only files the database owns ([`filename::parse`]) are removed, so a directory shared
//! with other files keeps them (and then is not removed); the lock is held while removing, so an
//! open database is refused instead of having its files pulled away; a missing directory is
//! already destroyed.

use storage::Fs;

use crate::error::Result;
use crate::filename::{self, FileKind};

/// Removes the database in `dir` (its files, then the directory when nothing else is in it).
pub fn destroy(fs: &dyn Fs, dir: &str) -> Result<()> {
    if !fs.exists(dir)? {
        return Ok(());
    }
    let lock_path = filename::lock_name(dir);
    let lock = fs.lock(&lock_path)?;
    let names = fs.list(dir)?;
    let mut others = false;
    for name in &names {
        match filename::parse(name) {
            Some(FileKind::Lock) => {}
            Some(_) => fs.remove(&filename::join(dir, name))?,
            None => others = true,
        }
    }
    drop(lock);
    if fs.exists(&lock_path)? {
        fs.remove(&lock_path)?;
    }
    if !others {
        fs.remove_dir(dir)?;
    }
    fs.sync_dir(parent(dir))?;
    Ok(())
}

fn parent(dir: &str) -> &str {
    dir.rsplit_once('/').map_or("", |(p, _)| p)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use storage::{Env, Fs, MemFs};

    use super::*;
    use crate::{Db, Options, WriteOptions};

    #[test]
    fn destroy_removes_the_database_and_refuses_an_open_one() {
        let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
        let opts = Options { create_if_missing: true, ..Options::default() };
        let db = Db::open(Env::new(Arc::clone(&fs)), "db", opts.clone()).unwrap();
        db.put(&WriteOptions::default(), b"k", b"v").unwrap();
        db.flush().unwrap();
        assert!(destroy(&*fs, "db").is_err(), "an open database is locked");
        db.close().unwrap();
        fs.create_dir_all("keep").unwrap();
        storage::write_all(&*fs, "keep/notes.txt", b"mine", true).unwrap();
        destroy(&*fs, "db").unwrap();
        assert!(!fs.exists("db").unwrap());
        destroy(&*fs, "db").unwrap();
        let db = Db::open(Env::new(Arc::clone(&fs)), "db", opts).unwrap();
        assert_eq!(db.get(&Default::default(), b"k").unwrap(), None, "a fresh database after destroy");
        db.close().unwrap();
        destroy(&*fs, "keep").unwrap();
        assert_eq!(fs.list("keep").unwrap(), vec!["notes.txt".to_string()], "files it does not own stay");
    }
}
