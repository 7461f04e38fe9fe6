#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| qore_client::fuzz_targets::sse_framer(data));
