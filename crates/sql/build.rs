//! Compiles the tiny C shim that sets libpg_query's thread-local lexer
//! switches (see csrc/scanner_flags.c).
fn main() {
    println!("cargo:rerun-if-changed=csrc/scanner_flags.c");
    cc::Build::new().file("csrc/scanner_flags.c").compile("tusk_scanner_flags");
}
