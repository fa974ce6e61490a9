//! The workspace's shape, checked from its sources: no import circles between the files of a
//! crate, and no source file over 600 lines (docs/design.md, "Layers").
//!
//! A file imports another when its code (tests left out) names a path into it: `crate::a::b`,
//! `super::x`, `self::y`, in a `use` or inline. A name re-exported by a module (`pub use`) is
//! followed to the module that defines it, so importing `crate::Foo` depends on the file that
//! holds `Foo`, not on `lib.rs`. The parse is textual (comments and string literals are not
//! understood beyond `//` lines), which is enough for this workspace's style; a test below checks
//! that it finds a planted circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The largest source file allowed, in lines.
const MAX_LINES: usize = 600;

/// Crates whose files still import each other in a circle, being untangled (issue 56). A crate
/// leaves the list when its circles are gone; the test fails while a listed crate has none, so
/// the list cannot outlive its reason. None left.
const CIRCLES_PENDING: [&str; 0] = [];

/// Files still over [`MAX_LINES`], being split (issue 56); as above, a file that no longer is
/// fails the test until it leaves the list. None left.
const LONG_PENDING: [&str; 0] = [];

/// A crate's modules: module path (`["clock", "lane"]`) to its file's code.
struct CrateSource {
    modules: BTreeMap<Vec<String>, String>,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("read a source folder").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its test module (by this workspace's convention the last item,
/// after `#[cfg(test)]`) and without comment lines.
fn code_of(text: &str) -> String {
    let cut = text.find("#[cfg(test)]\nmod ").unwrap_or(text.len());
    text[..cut]
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn load(src: &Path) -> CrateSource {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src).expect("under src");
        let mut path: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        let last = path.pop().expect("a file name");
        match last.as_str() {
            "lib.rs" if path.is_empty() => {}
            "main.rs" if path.is_empty() => continue, // a binary: its own root, imports only the library
            "mod.rs" => {}
            name => path.push(name.trim_end_matches(".rs").to_string()),
        }
        if path.first().is_some_and(|p| p == "bin") {
            continue;
        }
        let text = std::fs::read_to_string(&f).expect("read a source file");
        modules.insert(path, code_of(&text));
    }
    CrateSource { modules }
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// A path read, and the name it is known by where it is read (its last segment, or its rename).
type Named = (Vec<String>, String);

fn named(path: Vec<String>) -> Named {
    let name = path.last().cloned().unwrap_or_default();
    (path, name)
}

/// The paths in a `use` tree or inline path starting at `s` (just after `crate::`, `super::`,
/// ...): `a::b::{c, d::e as f, *}` gives `[a,b,c]`, `[a,b,d,e]` (as `f`), `[a,b]`. Returns the
/// bytes read.
fn paths_at(s: &str, prefix: Vec<String>, out: &mut Vec<Named>) -> usize {
    let mut path = prefix;
    let mut i = 0;
    let b = s.as_bytes();
    loop {
        while i < b.len() && (b[i] as char).is_whitespace() {
            i += 1;
        }
        if i < b.len() && b[i] == b'{' {
            i += 1;
            loop {
                while i < b.len() && (b[i] as char == ',' || (b[i] as char).is_whitespace()) {
                    i += 1;
                }
                if i >= b.len() || b[i] == b'}' {
                    return i + 1;
                }
                i += paths_at(&s[i..], path.clone(), out);
            }
        }
        if i < b.len() && b[i] == b'*' {
            out.push(named(path));
            return i + 1;
        }
        let start = i;
        while i < b.len() && is_ident_char(b[i] as char) {
            i += 1;
        }
        if start == i {
            out.push(named(path));
            return i;
        }
        path.push(s[start..i].to_string());
        if s[i..].starts_with("::") && !s[i + 2..].starts_with('<') {
            i += 2;
            continue;
        }
        // `x as y`: the rename does not change what is imported.
        let rest = s[i..].trim_start();
        if let Some(r) = rest.strip_prefix("as ") {
            let r = r.trim_start();
            let alias_len = r.find(|c: char| !is_ident_char(c)).unwrap_or(r.len());
            out.push((path, r[..alias_len].to_string()));
            return s.len() - r.len() + alias_len;
        }
        out.push(named(path));
        return i;
    }
}

/// The paths (absolute module paths) file `module` names.
fn referenced(module: &[String], code: &str) -> Vec<Named> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(k) = code[at..].find("::") {
        let pos = at + k;
        // The path's first segment and any `super::super::` before it.
        let head_start = code[..pos].rfind(|c: char| !is_ident_char(c)).map_or(0, |i| i + 1);
        let head = &code[head_start..pos];
        let before = code[..head_start].chars().last();
        at = pos + 2;
        if before == Some(':') {
            continue; // inside a longer path, already read from its start
        }
        let base: Option<Vec<String>> = match head {
            "crate" => Some(Vec::new()),
            "self" => Some(module.to_vec()),
            "super" => {
                let mut m = module.to_vec();
                m.pop();
                let mut rest = &code[at..];
                while let Some(r) = rest.strip_prefix("super::") {
                    m.pop();
                    rest = r;
                    at += "super::".len();
                }
                Some(m)
            }
            _ => None,
        };
        if let Some(base) = base {
            at += paths_at(&code[at..], base, &mut out);
        }
    }
    out
}

impl CrateSource {
    /// `pub use` re-exports of each module: name -> the absolute path it stands for.
    fn reexports(&self) -> BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> {
        let mut all = BTreeMap::new();
        for (m, code) in &self.modules {
            let mut names = BTreeMap::new();
            for stmt in code.split(';') {
                let t = stmt.trim_start();
                let Some(rest) = t.strip_prefix("pub use ").or_else(|| t.strip_prefix("pub(crate) use ")) else {
                    continue;
                };
                let rest = rest.trim_start();
                // A re-export of a child module's item: `pub use child::X` is `self::child::X`.
                let (base, body) = if let Some(r) = rest.strip_prefix("crate::") {
                    (Vec::new(), r)
                } else if let Some(r) = rest.strip_prefix("self::") {
                    (m.clone(), r)
                } else if let Some(r) = rest.strip_prefix("super::") {
                    (m[..m.len().saturating_sub(1)].to_vec(), r)
                } else {
                    (m.clone(), rest)
                };
                let mut paths = Vec::new();
                paths_at(body, base, &mut paths);
                for (p, name) in paths {
                    names.insert(name, p);
                }
            }
            all.insert(m.clone(), names);
        }
        all
    }

    /// The module file a path leads to: its longest module prefix, through re-exports.
    fn resolve(
        &self,
        path: &[String],
        reexports: &BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
        depth: usize,
    ) -> Vec<String> {
        let mut n = path.len();
        while n > 0 && !self.modules.contains_key(&path[..n]) {
            n -= 1;
        }
        let module = path[..n].to_vec();
        if depth < 8 {
            if let Some(name) = path.get(n) {
                if let Some(target) = reexports.get(&module).and_then(|r| r.get(name)) {
                    if target.as_slice() != path {
                        let mut t = target.clone();
                        t.extend_from_slice(&path[n + 1..]);
                        return self.resolve(&t, reexports, depth + 1);
                    }
                }
            }
        }
        module
    }

    /// Which files each file imports.
    fn imports(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let reexports = self.reexports();
        let mut edges = BTreeMap::new();
        for (m, code) in &self.modules {
            let mut to = BTreeSet::new();
            for (p, _) in referenced(m, code) {
                let target = self.resolve(&p, &reexports, 0);
                // A module's own descendants and ancestors are its parts and its parents:
                // `mod.rs` declaring its children is not an import.
                if target != *m && !target.starts_with(m) && !m.starts_with(&target) {
                    to.insert(target);
                }
            }
            edges.insert(m.clone(), to);
        }
        edges
    }
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    struct Walk<'a> {
        edges: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'a Vec<String>, usize>,
        low: BTreeMap<&'a Vec<String>, usize>,
        stack: Vec<&'a Vec<String>>,
        on_stack: BTreeSet<&'a Vec<String>>,
        found: Vec<Vec<Vec<String>>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Vec<String>) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.edges.get(v).into_iter().flatten() {
                if !self.edges.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on_stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    comp.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.found.push(comp);
                }
            }
        }
    }
    let mut walk = Walk {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

fn crates() -> Vec<(String, PathBuf)> {
    let mut out = vec![("python".to_string(), workspace().join("python/src"))];
    for e in std::fs::read_dir(workspace().join("crates")).expect("read crates/") {
        let p = e.expect("entry").path();
        if p.join("src").is_dir() {
            out.push((p.file_name().expect("name").to_string_lossy().into_owned(), p.join("src")));
        }
    }
    out.retain(|(_, src)| src.is_dir());
    out.sort();
    out
}

fn show(m: &[String]) -> String {
    if m.is_empty() {
        "lib.rs".into()
    } else {
        m.join("::")
    }
}

#[test]
fn no_import_circles_between_the_files_of_a_crate() {
    let mut report = Vec::new();
    for (name, src) in crates() {
        let krate = load(&src);
        let edges = krate.imports();
        let found = circles(&edges);
        if CIRCLES_PENDING.contains(&name.as_str()) {
            assert!(!found.is_empty(), "{name} has no import circle left: take it out of CIRCLES_PENDING");
            continue;
        }
        for c in found {
            let files: Vec<String> = c.iter().map(|m| show(m)).collect();
            let arrows: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    edges[a].iter().filter(|b| c.contains(b)).map(move |b| format!("{} -> {}", show(a), show(b)))
                })
                .collect();
            report.push(format!("{name}: {} files: {}\n    {}", c.len(), files.join(", "), arrows.join("\n    ")));
        }
    }
    assert!(report.is_empty(), "{} import circle(s):\n{}", report.len(), report.join("\n"));
}

#[test]
fn no_source_file_over_600_lines() {
    let mut long = Vec::new();
    for (_, src) in crates() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for f in files {
            let lines = std::fs::read_to_string(&f).expect("read").lines().count();
            let name = f.strip_prefix(workspace()).unwrap_or(&f).display().to_string();
            // The workspace folder may be reached through `..`: compare from `crates/` on.
            let name = name.find("crates/").map_or(name.clone(), |i| name[i..].to_string());
            let pending = LONG_PENDING.contains(&name.as_str());
            if lines > MAX_LINES && !pending {
                long.push(format!("{name} ({lines} lines)"));
            }
            assert!(lines > MAX_LINES || !pending, "{name} has {lines} lines: take it out of LONG_PENDING");
        }
    }
    assert!(long.is_empty(), "files over {MAX_LINES} lines:\n{}", long.join("\n"));
}

/// The checker itself: a planted circle through a re-export and a `super::` path is found, and a
/// parent declaring its children is not one.
#[test]
fn the_checker_finds_a_planted_circle() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).expect("mkdir");
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\npub use b::Thing;\n").expect("write");
    std::fs::write(src.join("a/mod.rs"), "mod inner;\npub use inner::Inner;\n").expect("write");
    std::fs::write(src.join("a/inner.rs"), "use crate::Thing;\npub struct Inner(Thing);\n").expect("write");
    std::fs::write(src.join("b.rs"), "pub struct Thing;\nfn f() -> crate::a::Inner { todo!() }\n").expect("write");
    let krate = load(src);
    let edges = krate.imports();
    let found = circles(&edges);
    let names: Vec<Vec<String>> = found.iter().map(|c| c.iter().map(|m| show(m)).collect()).collect();
    assert_eq!(names, vec![vec!["a::inner".to_string(), "b".to_string()]], "edges: {edges:?}");
    // Without the import back, no circle.
    std::fs::write(src.join("b.rs"), "pub struct Thing;\n").expect("write");
    assert!(circles(&load(src).imports()).is_empty());
}
