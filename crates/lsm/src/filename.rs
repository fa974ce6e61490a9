//! Names of the files in a database directory, as LevelDB names them: `NNNNNN.log` (WAL),
//! `NNNNNN.ldb` (SST), `MANIFEST-NNNNNN`, `CURRENT`, `LOCK`, and `NNNNNN.dbtmp` for a CURRENT being
//! replaced.

/// What a file in the database directory is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Log(u64),
    Table(u64),
    Manifest(u64),
    Current,
    Lock,
    Temp(u64),
}

pub fn log_name(dir: &str, n: u64) -> String {
    join(dir, &format!("{n:06}.log"))
}

pub fn table_name(dir: &str, n: u64) -> String {
    join(dir, &format!("{n:06}.ldb"))
}

pub fn manifest_name(dir: &str, n: u64) -> String {
    join(dir, &format!("MANIFEST-{n:06}"))
}

pub fn current_name(dir: &str) -> String {
    join(dir, "CURRENT")
}

pub fn lock_name(dir: &str) -> String {
    join(dir, "LOCK")
}

/// The directory where files a recovery or a repair will not use are kept instead of deleted.
pub fn lost_dir(dir: &str) -> String {
    join(dir, "lost")
}

pub fn temp_name(dir: &str, n: u64) -> String {
    join(dir, &format!("{n:06}.dbtmp"))
}

/// Joins a directory (possibly the root `""`) and a name.
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// Classifies a file name (not a path); `None` for files the database does not own.
pub fn parse(name: &str) -> Option<FileKind> {
    match name {
        "CURRENT" => return Some(FileKind::Current),
        "LOCK" => return Some(FileKind::Lock),
        _ => {}
    }
    if let Some(n) = name.strip_prefix("MANIFEST-") {
        return number(n).map(FileKind::Manifest);
    }
    let (stem, ext) = name.rsplit_once('.')?;
    let n = number(stem)?;
    match ext {
        "log" => Some(FileKind::Log(n)),
        "ldb" | "sst" => Some(FileKind::Table(n)),
        "dbtmp" => Some(FileKind::Temp(n)),
        _ => None,
    }
}

fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(table_name("db", 7), "db/000007.ldb");
        assert_eq!(log_name("", 12), "000012.log");
        for (name, kind) in [
            ("000007.ldb", FileKind::Table(7)),
            ("000007.sst", FileKind::Table(7)),
            ("123.log", FileKind::Log(123)),
            ("MANIFEST-000002", FileKind::Manifest(2)),
            ("CURRENT", FileKind::Current),
            ("LOCK", FileKind::Lock),
            ("000009.dbtmp", FileKind::Temp(9)),
        ] {
            assert_eq!(parse(name), Some(kind), "{name}");
        }
        for bad in ["x.log", "MANIFEST-", "000001.txt", "LOG", ".log", "-1.log"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
