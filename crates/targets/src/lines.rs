//! The line reader under both target formats.
//!
//! Reads a `BufRead` one line at a time, counting lines (1-based, for error
//! messages), with one line of look-ahead (the `http` format needs it to
//! tell a header from the next target), tolerating CRLF, and refusing lines
//! longer than [`MAX_LINE`] so a binary file or an endless line cannot
//! exhaust memory. Lines must be UTF-8.

use std::io::{BufRead, ErrorKind};

use crate::target::TargetError;

/// The longest line accepted, in bytes (a JSON target with an inline body
/// can be long; vegeta's scanner stops at 64 KiB).
pub const MAX_LINE: usize = 16 << 20;

/// A numbered line with its line ending removed (`\n` or `\r\n`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number.
    pub number: usize,
    /// The text, without the line ending.
    pub text: String,
}

/// Numbered lines out of a reader, with a one-line look-ahead.
///
/// After an I/O error, an over-long line or invalid UTF-8 the reader is
/// finished: later calls return `Ok(None)`.
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    number: usize,
    peeked: Option<Line>,
    done: bool,
    buf: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    /// Wraps a reader.
    pub fn new(reader: R) -> Lines<R> {
        Lines {
            reader,
            number: 0,
            peeked: None,
            done: false,
            buf: Vec::new(),
        }
    }

    /// The number of the last line read (or peeked).
    pub fn number(&self) -> usize {
        self.number
    }

    /// The next line, or `None` at the end of input.
    pub fn next_line(&mut self) -> Result<Option<Line>, TargetError> {
        if let Some(line) = self.peeked.take() {
            return Ok(Some(line));
        }
        self.read()
    }

    /// The next line without consuming it.
    pub fn peek(&mut self) -> Result<Option<&Line>, TargetError> {
        if self.peeked.is_none() {
            self.peeked = self.read()?;
        }
        Ok(self.peeked.as_ref())
    }

    fn read(&mut self) -> Result<Option<Line>, TargetError> {
        if self.done {
            return Ok(None);
        }
        self.buf.clear();
        let number = self.number + 1;
        let fail = |this: &mut Self, message: String| {
            this.done = true;
            Err(TargetError::new(number, message))
        };
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return fail(self, format!("read error: {e}")),
            };
            if available.is_empty() {
                if self.buf.is_empty() {
                    self.done = true;
                    return Ok(None);
                }
                break;
            }
            let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..=i], true),
                None => (available, false),
            };
            let len = chunk.len();
            self.buf.extend_from_slice(chunk);
            self.reader.consume(len);
            if self.buf.len() > MAX_LINE + 2 {
                return fail(self, format!("line longer than {} MiB", MAX_LINE >> 20));
            }
            if found {
                break;
            }
        }
        self.number = number;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        if self.buf.len() > MAX_LINE {
            return fail(self, format!("line longer than {} MiB", MAX_LINE >> 20));
        }
        match String::from_utf8(std::mem::take(&mut self.buf)) {
            Ok(text) => Ok(Some(Line { number, text })),
            Err(e) => fail(
                self,
                format!(
                    "line is not valid UTF-8 (at byte {})",
                    e.utf8_error().valid_up_to()
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor, Read};

    fn all(input: &[u8]) -> Vec<(usize, String)> {
        let mut lines = Lines::new(Cursor::new(input.to_vec()));
        let mut out = vec![];
        while let Some(l) = lines.next_line().unwrap() {
            out.push((l.number, l.text));
        }
        out
    }

    #[test]
    fn splits_lines() {
        assert_eq!(all(b""), vec![]);
        assert_eq!(all(b"a"), vec![(1, "a".into())]);
        assert_eq!(all(b"a\n"), vec![(1, "a".into())]);
        assert_eq!(
            all(b"a\r\n\r\nb\rc\n\n"),
            vec![
                (1, "a".into()),
                (2, "".into()),
                (3, "b\rc".into()),
                (4, "".into())
            ]
        );
    }

    #[test]
    fn peeks() {
        let mut lines = Lines::new(Cursor::new(b"x\ny\n".to_vec()));
        assert_eq!(lines.peek().unwrap().map(|l| l.number), Some(1));
        assert_eq!(lines.peek().unwrap().map(|l| l.number), Some(1));
        assert_eq!(lines.next_line().unwrap().map(|l| l.text), Some("x".into()));
        assert_eq!(lines.next_line().unwrap().map(|l| l.text), Some("y".into()));
        assert_eq!(lines.peek().unwrap(), None);
        assert_eq!(lines.next_line().unwrap(), None);
    }

    #[test]
    fn lines_across_small_buffers() {
        let text = "first line\nsecond, longer line\r\nthird";
        let reader = BufReader::with_capacity(3, Cursor::new(text.as_bytes().to_vec()));
        let mut lines = Lines::new(reader);
        let mut got = vec![];
        while let Some(l) = lines.next_line().unwrap() {
            got.push(l.text);
        }
        assert_eq!(got, ["first line", "second, longer line", "third"]);
    }

    #[test]
    fn refuses_bad_utf8_and_long_lines() {
        let mut lines = Lines::new(Cursor::new(b"ok\n\xff\xfe\nmore\n".to_vec()));
        assert!(lines.next_line().unwrap().is_some());
        let err = lines.next_line().unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("UTF-8"));
        assert_eq!(lines.next_line().unwrap(), None);

        let long = std::io::repeat(b'a').take(MAX_LINE as u64 + 10);
        let mut lines = Lines::new(BufReader::new(long));
        let err = lines.next_line().unwrap_err();
        assert_eq!((err.line, err.message.contains("longer than")), (1, true));
    }

    #[test]
    fn read_errors_name_the_line() {
        struct Broken(usize);
        impl Read for Broken {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0 == 0 {
                    return Err(std::io::Error::other("disk on fire"));
                }
                self.0 -= 1;
                buf[0] = b'\n';
                Ok(1)
            }
        }
        let mut lines = Lines::new(BufReader::new(Broken(2)));
        assert!(lines.next_line().unwrap().is_some());
        assert!(lines.next_line().unwrap().is_some());
        let err = lines.next_line().unwrap_err();
        assert_eq!(err.to_string(), "targets:3: read error: disk on fire");
    }
}
