//! A result set's tables in a markdown document: a table as markdown, and the block of a
//! document that a generated table replaces, so that a page such as docs/results/<paper>.md
//! carries the numbers of a results.json without anyone copying them by hand.
//!
//! A block is the text between the lines `<!-- KEY -->` and `<!-- end KEY -->`; writing it keeps
//! both lines and replaces everything between them. Writing the same block twice gives the same
//! document.

use std::fs;
use std::path::Path;

use super::error::{Op, ReportError};
use super::model::ResultTable;

/// `t` as a markdown table ('|' in a cell escaped).
pub fn table(t: &ResultTable) -> String {
    let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut s = row(t.columns.clone());
    s.push_str(&row(t.columns.iter().map(|_| "---".to_string()).collect()));
    for r in &t.rows {
        s.push_str(&row(r.iter().map(|c| c.to_string().replace('|', "\\|")).collect()));
    }
    s
}

/// The text of the block `key` of `doc` (between its two lines), if `doc` has it.
pub fn block<'a>(doc: &'a str, key: &str) -> Option<&'a str> {
    span(doc, key).map(|(start, end)| &doc[start..end])
}

/// Where the block `key`'s text starts and ends in `doc`.
fn span(doc: &str, key: &str) -> Option<(usize, usize)> {
    let open = format!("<!-- {key} -->\n");
    let start = doc.find(&open)? + open.len();
    let end = start + doc[start..].find(&format!("<!-- end {key} -->"))?;
    Some((start, end))
}

/// `doc` with the block `key` holding `body` (see the module's docs), or `None` when `doc` has no
/// such block.
pub fn with_block(doc: &str, key: &str, body: &str) -> Option<String> {
    let (start, end) = span(doc, key)?;
    let mut body = body.to_string();
    if !body.ends_with('\n') {
        body.push('\n');
    }
    Some(format!("{}{body}{}", &doc[..start], &doc[end..]))
}

/// Rewrites the blocks of the markdown file `path` named by each `(key, body)`; a block missing
/// from the file is an error that says which lines to add.
pub fn write_blocks(path: &Path, blocks: &[(String, String)]) -> Result<(), ReportError> {
    let mut doc = fs::read_to_string(path).map_err(|e| ReportError::io(Op::Read, path, e))?;
    for (key, body) in blocks {
        doc = with_block(&doc, key, body)
            .ok_or_else(|| ReportError::NoBlock { path: path.to_path_buf(), key: key.clone() })?;
    }
    fs::write(path, doc).map_err(|e| ReportError::io(Op::Write, path, e))
}

#[cfg(test)]
mod tests {
    use super::super::model::Cell;
    use super::*;

    #[test]
    fn a_block_is_replaced_between_its_lines_and_twice_is_once() {
        let t = ResultTable {
            name: "claims (small)".into(),
            columns: vec!["what".into(), "ours".into()],
            rows: vec![vec![Cell::Text("a|b".into()), Cell::Number(1.23456)]],
        };
        let body = table(&t);
        assert_eq!(body, "| what | ours |\n| --- | --- |\n| a\\|b | 1.235 |\n");
        let doc = "# T\n<!-- claims (small) -->\nold\nlines\n<!-- end claims (small) -->\nafter\n";
        let once = with_block(doc, "claims (small)", &body).unwrap();
        assert_eq!(once, format!("# T\n<!-- claims (small) -->\n{body}<!-- end claims (small) -->\nafter\n"));
        assert_eq!(with_block(&once, "claims (small)", &body).unwrap(), once);
        assert!(with_block(doc, "claims (paper)", &body).is_none());
        assert_eq!(block(doc, "claims (small)"), Some("old\nlines\n"));
        assert!(with_block("<!-- claims (small) -->\nno end\n", "claims (small)", &body).is_none());
    }
}
