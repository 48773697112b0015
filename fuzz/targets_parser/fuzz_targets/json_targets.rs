//! Fuzzes the `json` targets format: any bytes give targets or errors, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use volley_targets::{Defaults, Format, TargetReader};

fuzz_target!(|data: &[u8]| {
    let reader = TargetReader::new(std::io::Cursor::new(data), Format::Json, Defaults::default());
    for result in reader.take(100_000) {
        let _ = result;
    }
});
