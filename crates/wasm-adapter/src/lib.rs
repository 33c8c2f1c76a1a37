//! The WebAssembly surface of the DSH plugin family.
//!
//! Each plugin's surface is a module behind a cargo feature of the same name, so each npm package
//! ships a `.wasm` holding only its own plugin (`cargo xtask build` compiles the crate once per
//! package with `--no-default-features --features <row>`); the default features turn every plugin
//! on, so `cargo test` and clippy see them all. This is the only crate that knows wasm-bindgen and
//! JS value shapes; it knows nothing of DSH's runtime: each package's shim turns DSH events into
//! flat arguments, and everything that decides behaviour happens here or in the pure crates.

#[cfg(feature = "research-nudge")]
pub mod research_nudge;

#[cfg(feature = "pain-point-check")]
pub mod pain_point_check;

#[cfg(feature = "autoresearch")]
pub mod autoresearch;
