#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| qore_agents::fuzz_targets::profile(data));
