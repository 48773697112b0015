//! Go's `text/tabwriter`, as vegeta configures it (`minwidth 0`, padding
//! `n`, pad character `' '`, left-aligned), so tables come out byte for byte
//! as vegeta prints them.
//!
//! The rules that matter: text is split into tab-terminated cells; the last
//! cell of a line is not part of any column and is never padded; a column is
//! a run of consecutive lines that all have a cell at that index, and its
//! width is the widest cell plus the padding; a line with a single cell ends
//! every column (Go flushes there). Widths count Unicode scalar values, as Go
//! counts runes.

/// One cell: its text and whether a tab terminated it.
#[derive(Debug, Default, Clone)]
struct Cell {
    text: String,
}

impl Cell {
    fn width(&self) -> usize {
        self.text.chars().count()
    }
}

/// Collects text, then lays it out on [`TabWriter::finish`].
#[derive(Debug)]
pub struct TabWriter {
    padding: usize,
    out: String,
    /// Completed lines of the current block, plus the line being written.
    lines: Vec<Vec<Cell>>,
    cell: String,
    widths: Vec<usize>,
}

impl TabWriter {
    /// A writer padding every column with `padding` spaces.
    pub fn new(padding: usize) -> Self {
        TabWriter {
            padding,
            out: String::new(),
            lines: vec![Vec::new()],
            cell: String::new(),
            widths: Vec::new(),
        }
    }

    /// Appends text; `\t` ends a cell, `\n` ends a line.
    pub fn write_str(&mut self, s: &str) {
        let mut rest = s;
        while let Some(i) = rest.find(['\t', '\n']) {
            self.cell.push_str(&rest[..i]);
            let ch = rest.as_bytes()[i];
            rest = &rest[i + 1..];
            let ncells = self.terminate_cell();
            if ch == b'\n' {
                self.lines.push(Vec::new());
                if ncells == 1 {
                    // A one-cell line cannot affect later columns: Go
                    // flushes here, ending every column block.
                    self.flush_block();
                }
            }
        }
        self.cell.push_str(rest);
    }

    fn terminate_cell(&mut self) -> usize {
        let cell = Cell {
            text: std::mem::take(&mut self.cell),
        };
        let line = self.lines.last_mut().expect("lines is never empty");
        line.push(cell);
        line.len()
    }

    fn flush_block(&mut self) {
        if !self.cell.is_empty() {
            self.terminate_cell();
        }
        let n = self.lines.len();
        self.format(0, n);
        self.lines.clear();
        self.lines.push(Vec::new());
        self.widths.clear();
    }

    /// Lays out everything written and returns the text.
    pub fn finish(mut self) -> String {
        self.flush_block();
        self.out
    }

    fn format(&mut self, mut line0: usize, line1: usize) {
        let column = self.widths.len();
        let mut this = line0;
        while this < line1 {
            if column + 1 >= self.lines[this].len() {
                this += 1;
                continue;
            }
            // A cell exists in this column: lines before it are printed with
            // the current widths, then the column block is measured.
            self.write_lines(line0, this);
            line0 = this;
            let mut width = 0;
            while this < line1 {
                let line = &self.lines[this];
                if column + 1 >= line.len() {
                    break;
                }
                width = width.max(line[column].width() + self.padding);
                this += 1;
            }
            self.widths.push(width);
            self.format(line0, this);
            self.widths.pop();
            line0 = this;
        }
        self.write_lines(line0, line1);
    }

    fn write_lines(&mut self, line0: usize, line1: usize) {
        for i in line0..line1 {
            for (j, cell) in self.lines[i].iter().enumerate() {
                self.out.push_str(&cell.text);
                if let Some(w) = self.widths.get(j) {
                    let pad = w.saturating_sub(cell.width());
                    self.out.extend(std::iter::repeat_n(' ', pad));
                }
            }
            if i + 1 == self.lines.len() {
                // The last buffered line has no newline yet.
                let cell = std::mem::take(&mut self.cell);
                self.out.push_str(&cell);
            } else {
                self.out.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(padding: usize, s: &str) -> String {
        let mut tw = TabWriter::new(padding);
        tw.write_str(s);
        tw.finish()
    }

    #[test]
    fn aligns_columns_and_leaves_last_cell_alone() {
        assert_eq!(
            tab(2, "a\tbb\tc\nccc\td\te  \n"),
            "a    bb  c\nccc  d   e  \n"
        );
    }

    #[test]
    fn one_cell_lines_end_column_blocks() {
        assert_eq!(
            tab(2, "a\tb\nlonger line\nxxxxxx\ty\n"),
            "a  b\nlonger line\nxxxxxx  y\n"
        );
    }

    #[test]
    fn columns_are_per_block_of_consecutive_lines() {
        // The second line has no cell in column 1, ending that column there.
        assert_eq!(
            tab(1, "a\tb\tc\nd\te\nf\tgggg\th\n"),
            "a b c\nd e\nf gggg h\n"
        );
    }

    #[test]
    fn empty_cells_are_padded_and_runes_counted() {
        assert_eq!(tab(2, "x\t\ty\nµµ\tz\tw\n"), "x      y\nµµ  z  w\n");
    }

    #[test]
    fn unterminated_text_is_written_without_newline() {
        assert_eq!(tab(2, "a\tb\ntail"), "a  b\ntail");
    }
}
