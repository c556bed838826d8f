//! Output limits shared by the file tools (pi's `truncate.ts`): at most 2000 lines and
//! 50 KB per result, long lines cut with a marker saying so.

/// Most lines a result shows.
pub const MAX_LINES: usize = 2000;
/// Most bytes a result shows.
pub const MAX_BYTES: usize = 50 * 1024;
/// `read` cuts lines longer than this many characters.
pub const READ_MAX_LINE_CHARS: usize = 2000;
/// `grep` cuts matched and context lines longer than this many characters.
pub const GREP_MAX_LINE_CHARS: usize = 500;

/// `line` cut to `max_chars` characters; a cut line ends with `... [truncated]` (pi's
/// marker). Returns whether it was cut.
pub fn cut_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        Some((at, _)) => (format!("{}... [truncated]", &line[..at]), true),
        None => (line.to_owned(), false),
    }
}

/// Collects output lines until the line or byte budget is spent.
#[derive(Debug)]
pub struct LineBudget {
    lines: Vec<String>,
    bytes: usize,
    max_lines: usize,
    max_bytes: usize,
    exhausted: bool,
}

impl LineBudget {
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            lines: Vec::new(),
            bytes: 0,
            max_lines,
            max_bytes,
            exhausted: false,
        }
    }

    /// Add a line if it fits; returns false (and stays exhausted) once it does not.
    pub fn push(&mut self, line: String) -> bool {
        let cost = line.len() + 1;
        if self.exhausted
            || self.lines.len() >= self.max_lines
            || (self.bytes + cost > self.max_bytes && !self.lines.is_empty())
        {
            self.exhausted = true;
            return false;
        }
        self.bytes += cost;
        self.lines.push(line);
        true
    }

    /// Whether a line was refused.
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The collected lines joined with `\n`.
    pub fn join(&self) -> String {
        self.lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_char_boundaries() {
        assert_eq!(cut_line("héllo", 2), ("hé... [truncated]".to_owned(), true));
        assert_eq!(cut_line("hé", 2), ("hé".to_owned(), false));
        let mut budget = LineBudget::new(2, 100);
        assert!(budget.push("a".into()));
        assert!(budget.push("b".into()));
        assert!(!budget.push("c".into()));
        assert!(budget.exhausted());
        assert_eq!(budget.join(), "a\nb");
    }
}
