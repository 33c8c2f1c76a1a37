//! `cargo xtask extraction`: limit-break's main-content extraction measured on real pages.
//!
//! Two sets. **The open web**: the dev split of WCXB (Web Content eXtraction Benchmark,
//! CC-BY-4.0; seven page types) and the ScrapingHub article extraction benchmark (MIT; 181 news
//! and blog pages), each scored with its own evaluator (`bench/extraction/web.py`). Neither is
//! downloaded here: clone them and point `LIMIT_BREAK_WCXB` and `LIMIT_BREAK_SCRAPINGHUB` at the
//! clones, or put them at `.cache/extraction/wcxb` and `.cache/extraction/scrapinghub`. Only
//! WCXB's `dev/` split and `evaluate.py` are read; its `test/` split is held out and never opened.
//!
//! **Documentation**: the HTML documentation that Debian packages ship (several generators: Sphinx,
//! AsciiDoc, DocBook, rustdoc, mdBook, MkDocs, Javadoc, gtk-doc, Node.js's and SQLite's own),
//! downloaded with `apt-get download` and unpacked into `.cache/extraction/` (nothing is
//! committed). trafilatura, the comparison, is installed from PyPI into a virtual environment
//! there: a benchmark dependency only. `bench/extraction/measure.py` chooses the pages, defines
//! each generator's ground truth and scores.
//!
//! The comparisons, trafilatura and readability-lxml, are installed from PyPI into a virtual
//! environment in `.cache/extraction/venv`: benchmark dependencies only. For every page the
//! crate's example `extract_pages`, built in release, writes the text of `format: "text"` (ours,
//! the main content) and of `format: "page"` (the whole page as text, what `resilient_fetch`
//! returned before extraction) and times the extraction.
//!
//! Not part of `cargo xtask ci`: it downloads about 55 MB and takes a few minutes.

use crate::util::{cargo_cmd, rel, root};
use anyhow::{Context, Result, bail, ensure};
use std::path::{Path, PathBuf};
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
const PYTHON_REQUIREMENTS: &[&str] = &[
    "trafilatura==2.3.1",
    "lxml_html_clean==0.4.6",
    "readability-lxml==0.8.4.1",
];

/// Where a web benchmark is found: the environment variable, or this directory under
/// `.cache/extraction/`, and where to get it.
const WEB_SETS: &[(&str, &str, &str)] = &[
    (
        "LIMIT_BREAK_WCXB",
        "wcxb",
        "https://github.com/Murrough-Foley/web-content-extraction-benchmark (only dev/ and evaluate.py are read)",
    ),
    (
        "LIMIT_BREAK_SCRAPINGHUB",
        "scrapinghub",
        "https://github.com/scrapinghub/article-extraction-benchmark",
    ),
];

/// `cargo xtask extraction`.
pub fn run(args: &[String]) -> Result<()> {
    if let Some(other) = args.first() {
        bail!("unknown argument `{other}`\nusage: cargo xtask extraction");
    }
    let cache = root().join(".cache").join("extraction");
    let [wcxb, scrapinghub] = web_sets(&cache)?;
    let pages_root = cache.join("root");
    ensure_pages(&cache, &pages_root)?;
    let python = ensure_python(&cache)?;
    let bench = root().join("bench").join("extraction");

    println!("## Documentation (Debian)\n");
    let manifest = cache.join("pages.json");
    let out = fresh_dir(&cache.join("out"))?;
    run_python(
        &python,
        &bench.join("measure.py"),
        "pages",
        &[&pages_root, &manifest],
    )?;
    let pages: serde_json::Value = serde_json::from_slice(&std::fs::read(&manifest)?)?;
    let pages = pages.as_array().context("the manifest is a list")?;
    let mut list = String::new();
    for page in pages {
        let path = page["path"].as_str().context("a page has a path")?;
        list.push_str(&format!("{}\n", pages_root.join(path).display()));
    }
    let doc_list = cache.join("pages.list");
    std::fs::write(&doc_list, list)?;
    extract_pages(&doc_list, &out)?;
    run_python(
        &python,
        &bench.join("measure.py"),
        "score",
        &[&pages_root, &manifest, &out],
    )?;

    println!("\n## The open web (WCXB dev, ScrapingHub)\n");
    let work = cache.join("web");
    let web_out = fresh_dir(&work.join("out"))?;
    run_python(
        &python,
        &bench.join("web.py"),
        "pages",
        &[&wcxb, &scrapinghub, &work],
    )?;
    extract_pages(&work.join("web.list"), &web_out)?;
    run_python(
        &python,
        &bench.join("web.py"),
        "score",
        &[&work, &web_out, &wcxb, &scrapinghub],
    )?;
    println!(
        "\nscores per page: {} and {}",
        rel(&out.join("report.json")),
        rel(&web_out.join("report.json"))
    );
    Ok(())
}

/// The WCXB and ScrapingHub clones, or an error saying how to get them.
fn web_sets(cache: &Path) -> Result<[PathBuf; 2]> {
    let locate = |(variable, directory, source): &(&str, &str, &str)| -> Result<PathBuf> {
        let path = std::env::var_os(variable).map_or_else(|| cache.join(directory), PathBuf::from);
        ensure!(
            path.join("evaluate.py").exists(),
            "{} has no evaluate.py: clone {source} there, or set {variable} to a clone",
            rel(&path)
        );
        Ok(path)
    };
    Ok([locate(&WEB_SETS[0])?, locate(&WEB_SETS[1])?])
}

fn fresh_dir(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", rel(dir)))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", rel(dir)))?;
    Ok(dir.to_owned())
}

/// Runs the crate's `extract_pages` example, in release, over the pages listed in `list`.
fn extract_pages(list: &Path, out: &Path) -> Result<()> {
    let status = cargo_cmd([
        "run",
        "--quiet",
        "--release",
        "--package",
        "limit-break-fetch",
        "--example",
        "extract_pages",
        "--",
    ])
    .arg(list)
    .arg(out)
    .status()
    .context("running cargo")?;
    ensure!(status.success(), "extract_pages failed: {status}");
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
