//! JUnit XML (the format CI systems show as test results): one `<testsuite>` of
//! `<testcase>`s, a failed one with `<failure>`, a skipped one with `<skipped/>`, every
//! case's figures in `<system-out>`. It writes what it is given; it judges nothing.

use std::fmt::Write;

pub enum Outcome {
    Passed,
    Failed(String),
    Skipped(String),
}

/// One test case: `class` groups cases (`iopulse.compare.run`), `name` is the figure or
/// the expectation.
pub struct Case {
    pub class: String,
    pub name: String,
    pub outcome: Outcome,
    pub output: String,
}

/// `text` with the five XML special characters escaped (and control characters, which XML
/// 1.0 cannot hold, dropped).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => {}
            c => out.push(c),
        }
    }
    out
}

/// The whole document: one suite named `suite` holding `cases`.
pub fn document(suite: &str, cases: &[Case]) -> String {
    let failures = cases.iter().filter(|c| matches!(c.outcome, Outcome::Failed(_))).count();
    let skipped = cases.iter().filter(|c| matches!(c.outcome, Outcome::Skipped(_))).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\">",
        escape(suite),
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">",
        escape(suite),
        cases.len()
    );
    for c in cases {
        let _ = write!(out, "    <testcase classname=\"{}\" name=\"{}\">", escape(&c.class), escape(&c.name));
        match &c.outcome {
            Outcome::Passed => {}
            Outcome::Failed(m) => {
                let _ = write!(out, "\n      <failure message=\"{}\" type=\"threshold\"/>", escape(m));
            }
            Outcome::Skipped(m) => {
                let _ = write!(out, "\n      <skipped message=\"{}\"/>", escape(m));
            }
        }
        let _ = writeln!(out, "\n      <system-out>{}</system-out>\n    </testcase>", escape(&c.output));
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_characters_are_escaped() {
        assert_eq!(escape("a<=b & \"c\"\u{1}"), "a&lt;=b &amp; &quot;c&quot;");
    }
}
