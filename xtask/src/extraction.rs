//! `cargo xtask extraction`: limit-break's main-content extraction measured on real pages.
//!
//! The pages are the HTML documentation that Debian packages ship (several generators: Sphinx,
//! AsciiDoc, DocBook, rustdoc, mdBook, MkDocs, Javadoc, gtk-doc, Node.js's and SQLite's own),
//! downloaded with `apt-get download` and unpacked into `.cache/extraction/` (nothing is
//! committed). trafilatura, the comparison, is installed from PyPI into a virtual environment
//! there: a benchmark dependency only. `bench/extraction/measure.py` chooses the pages, defines
//! each generator's ground truth and scores; this command writes, for each page, the text of
//! `format: "text"` (ours, the main content) and of `format: "page"` (the whole page as text,
//! what `resilient_fetch` returned before extraction) with the crate's own functions.
//!
//! Not part of `cargo xtask ci`: it downloads about 55 MB and takes a few minutes.

use crate::util::{rel, root};
use anyhow::{Context, Result, bail, ensure};
use std::path::Path;
use std::process::Command;

/// The Debian packages whose HTML documentation is measured.
const PACKAGES: &[&str] = &[
    "python-requests-doc",
    "python-flask-doc",
    "cmake-doc",
    "git-doc",
    "postgresql-doc-15",
    "rust-doc",
    "mkdocs-doc",
    "nodejs-doc",
    "libcommons-lang3-java-doc",
    "sqlite3-doc",
    "libglib2.0-doc",
];

/// The benchmark's Python requirements, pinned.
const PYTHON_REQUIREMENTS: &[&str] = &["trafilatura==2.3.1", "lxml_html_clean==0.4.6"];

/// `cargo xtask extraction`.
pub fn run(args: &[String]) -> Result<()> {
    if let Some(other) = args.first() {
        bail!("unknown argument `{other}`\nusage: cargo xtask extraction");
    }
    let cache = root().join(".cache").join("extraction");
    let pages_root = cache.join("root");
    ensure_pages(&cache, &pages_root)?;
    let python = ensure_python(&cache)?;
    let script = root().join("bench").join("extraction").join("measure.py");
    let manifest = cache.join("pages.json");
    let out = cache.join("out");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", rel(&out)))?;
    run_python(&python, &script, "pages", &[&pages_root, &manifest])?;
    let pages: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest)?)?;
    let pages = pages.as_array().context("the manifest is a list")?;
    for (index, page) in pages.iter().enumerate() {
        let path = page["path"].as_str().context("a page has a path")?;
        let html = String::from_utf8_lossy(&std::fs::read(pages_root.join(path))?).into_owned();
        std::fs::write(
            out.join(format!("{index}.ours.txt")),
            fetch::main_content::to_text(&html),
        )?;
        std::fs::write(
            out.join(format!("{index}.page.txt")),
            fetch::html::to_text(&html),
        )?;
    }
    run_python(&python, &script, "score", &[&pages_root, &manifest, &out])?;
    println!("scores per page: {}", rel(&out.join("report.json")));
    Ok(())
}

/// Downloads and unpacks the documentation packages once.
fn ensure_pages(cache: &Path, pages_root: &Path) -> Result<()> {
    let debs = cache.join("debs");
    let stamp = pages_root.join(".unpacked");
    if stamp.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(&debs)?;
    let status = Command::new("apt-get")
        .arg("download")
        .args(PACKAGES)
        .current_dir(&debs)
        .status()
        .context("running apt-get download (Debian's apt is needed)")?;
    ensure!(status.success(), "apt-get download failed: {status}");
    std::fs::create_dir_all(pages_root)?;
    for entry in std::fs::read_dir(&debs)? {
        let deb = entry?.path();
        if deb.extension().is_some_and(|e| e == "deb") {
            let status = Command::new("dpkg-deb")
                .arg("-x")
                .arg(&deb)
                .arg(pages_root)
                .status()?;
            ensure!(status.success(), "dpkg-deb -x {} failed", rel(&deb));
        }
    }
    std::fs::write(stamp, "")?;
    Ok(())
}

/// A virtual environment with the pinned benchmark requirements.
fn ensure_python(cache: &Path) -> Result<std::path::PathBuf> {
    let venv = cache.join("venv");
    let python = venv.join("bin").join("python");
    let stamp = venv.join(PYTHON_REQUIREMENTS.join(" ").replace(['=', ' '], "_"));
    if stamp.exists() {
        return Ok(python);
    }
    if !python.exists() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .context("running python3 -m venv (Python 3 is needed)")?;
        ensure!(status.success(), "python3 -m venv failed");
    }
    let status = Command::new(&python)
        .args(["-m", "pip", "install", "--quiet"])
        .args(PYTHON_REQUIREMENTS)
        .status()?;
    ensure!(
        status.success(),
        "pip install {PYTHON_REQUIREMENTS:?} failed"
    );
    std::fs::write(stamp, "")?;
    Ok(python)
}

fn run_python(python: &Path, script: &Path, command: &str, paths: &[&Path]) -> Result<()> {
    let status = Command::new(python)
        .arg(script)
        .arg(command)
        .args(paths)
        .status()?;
    ensure!(status.success(), "{} failed: {status}", rel(script));
    Ok(())
}
