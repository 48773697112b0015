//! Fuzz target for the results decoder: any bytes, in any detected format,
//! must decode to records and at most one final error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(records) = volley_results::from_reader("fuzz", std::io::Cursor::new(data.to_vec()))
    else {
        return;
    };
    let mut errored = false;
    for item in records {
        assert!(!errored, "an item after an error");
        errored = item.is_err();
    }
});
