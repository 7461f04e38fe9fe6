//! Compiles every `bundled/agents/*.toml` into the library (the list is generated so a new
//! bundled profile is one new file).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new("bundled/agents");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("bundled/agents exists")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    let mut out = String::from("pub const AGENTS: &[(&str, &str)] = &[\n");
    for name in &names {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(name);
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            out,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .expect("write to a String");
    }
    out.push_str("];\n");
    let target = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("bundled_agents.rs");
    std::fs::write(target, out).expect("write the bundled agent list");
}
