//! Build script: links the `versus` binary as a fixed-address executable on Linux.
//!
//! Why: a position-independent executable of this size carries about 41,000 relative
//! relocations that the dynamic loader applies at every start, writing (and so copying) every
//! page of `.data.rel.ro`; that was more than half of the CPU time of `versus --version` and
//! of a small `versus tool` call (docs/benchmarks.md, "Process start-up"). Linked without
//! `-pie`, the loader has nothing to relocate. The cost is that the binary's own code is not
//! placed at a random address (shared libraries, stack and heap still are). Only the binary is
//! affected: the library, tests and benches compile as before.
#![allow(clippy::print_stdout)] // cargo reads instructions from stdout

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if linux && std::env::var_os("VERSUS_PIE").is_none() {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-env-changed=VERSUS_PIE");
}
