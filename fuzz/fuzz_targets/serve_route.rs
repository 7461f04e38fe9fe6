#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| qore_serve::fuzz_targets::route(data));
