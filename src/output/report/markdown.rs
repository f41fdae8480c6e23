//! What Markdown output shares: text made fit for a table's cell.
//!
//! It escapes; it formats no figure and decides no layout.

/// `text` as the content of one cell of a Markdown table: a `|` (which would end the cell,
/// in a code span too) escaped, a line break made a space, so that a job name, a path or an
/// expectation never breaks the table.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pipe_or_a_line_break_never_breaks_a_cell() {
        assert_eq!(super::cell("a|b"), "a\\|b");
        assert_eq!(super::cell("job\nname"), "job name");
        assert_eq!(super::cell("read.p99<=2ms"), "read.p99<=2ms");
    }
}
