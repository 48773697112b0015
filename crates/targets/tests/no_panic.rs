//! The parsers never panic: thousands of deterministic pseudo-random and
//! mutated inputs in both formats must each give targets or an error.

use std::io::Cursor;

use volley_targets::{Defaults, Format, TargetReader};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SEEDS: &[&str] = &[
    "GET http://a/1\nX-A: 1\nX-A: 2\n@/dev/null\n\n# c\nPOST https://b:8443/x?y=z\nContent-Type: text/plain\n",
    "PUT http://[::1]:80/\r\nHost: h\r\n\r\nDELETE http://u:p@h/\n",
    "{\"method\":\"POST\",\"url\":\"http://a/\",\"body\":\"aGk=\",\"header\":{\"K\":[\"v\",\"w\"]}}\n{\"method\":\"GET\",\"url\":\"https://b/\"}\n",
];

const TOKENS: &[&str] = &[
    "\n",
    "\r\n",
    " ",
    "\t",
    ":",
    "@",
    "#",
    "GET ",
    "http://",
    "https://",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    "\\",
    "\\u0000",
    "=",
    "%",
    "[::1]",
    ":99999",
    "@@",
    "\u{7f}",
    "\0",
    "é",
    "\u{feff}",
    "null",
    "\"header\":",
    "\"body\":\"!!\"",
    "\"method\":",
    "\"url\":",
];

fn run(bytes: &[u8], format: Format) {
    let reader = TargetReader::new(Cursor::new(bytes.to_vec()), format, Defaults::default());
    // Bounded: every call consumes at least one line or ends.
    for t in reader.take(10_000).flatten() {
        assert!(!t.method.is_empty());
        assert!(t.url.to_ascii_lowercase().starts_with("http"));
    }
}

#[test]
fn mutated_inputs_never_panic() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for i in 0..4_000 {
        let mut bytes = SEEDS[i % SEEDS.len()].as_bytes().to_vec();
        for _ in 0..1 + rng.below(8) {
            let at = rng.below(bytes.len() + 1);
            match rng.below(5) {
                0 => {
                    let token = TOKENS[rng.below(TOKENS.len())].as_bytes();
                    bytes.splice(at..at, token.iter().copied());
                }
                1 if at < bytes.len() => {
                    let end = (at + rng.below(8)).min(bytes.len());
                    bytes.drain(at..end);
                }
                2 if at < bytes.len() => bytes[at] = rng.next() as u8,
                3 => bytes.truncate(at),
                _ => {
                    let chunk: Vec<u8> = bytes[..at].to_vec();
                    bytes.extend_from_slice(&chunk);
                }
            }
        }
        run(&bytes, Format::Http);
        run(&bytes, Format::Json);
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..2_000 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(4) {
                0 => {
                    let specials = b"\n:@# {}\"GET";
                    specials[rng.below(specials.len())]
                }
                _ => rng.next() as u8,
            })
            .collect();
        run(&bytes, Format::Http);
        run(&bytes, Format::Json);
    }
}
