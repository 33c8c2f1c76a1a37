//! `cargo xtask chart-test`: the family's pictures checked in a real headless browser.
//!
//! - `research-nudge replay --html`: it draws the vector session
//!   `vectors/sessions/synthetic-loop.jsonl.zstd` (reminders, holds by snooze and cooldown, a
//!   research reset, prompts, failures, a live reminder) with the real CLI on Node 24.
//! - `dsh-autoresearch show --html`: it runs `tests/support/example-run.mjs`, a real headless
//!   run in a scratch repository (kept, rejected and failed candidates, a target), and draws it.
//!
//! Each page is opened in Debian's Chromium (installed with apt-get when it is missing and this
//! runs as root); the screenshot is decoded and checked for what a person would see: the page's
//! size and each fixed color of the page (`crates/replay/src/research_nudge/chart.rs`,
//! `crates/autoresearch/src/picture.rs`) in enough pixels; for research-nudge also two separate
//! reminder markers and the debt line crossing the threshold line.
//!
//! `--write-example` also copies the screenshots to `packages/research-nudge/docs/replay-chart.png`
//! and `packages/autoresearch/docs/run-picture.png`, the images the package READMEs link.

use crate::util::{self, rel, root};
use crate::{build, node, packages};
use anyhow::{Context, Result, bail, ensure};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser window: the pages are 1000 px wide plus margins.
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 900;

/// A color the screenshot must show, and in how many pixels at least.
type Expected = (&'static str, [u8; 3], usize);

/// research-nudge's colors (`chart::COLORS`).
const NUDGE_COLORS: [Expected; 10] = [
    ("debt line", [0x1d, 0x4e, 0xd8], 800),
    ("threshold lines", [0x7f, 0x1d, 0x1d], 1000),
    ("reminder markers", [0xef, 0x44, 0x44], 150),
    ("held by cooldown", [0xf5, 0x9e, 0x0b], 80),
    ("held by snooze", [0x8b, 0x5c, 0xf6], 150),
    ("research reset", [0x16, 0xa3, 0x4a], 80),
    ("user prompts", [0x64, 0x74, 0x8b], 60),
    ("calls line", [0x08, 0x91, 0xb2], 400),
    ("minutes line", [0xa1, 0x62, 0x07], 400),
    ("failure ticks", [0xdb, 0x27, 0x77], 60),
];

/// autoresearch's colors (`picture::COLORS`), for the example run's marks.
const RUN_COLORS: [Expected; 7] = [
    ("baseline", [0x25, 0x63, 0xeb], 100),
    ("baseline band", [0xbf, 0xdb, 0xfe], 1500),
    ("kept + best line", [0x16, 0xa3, 0x4a], 2500),
    ("rejected", [0x94, 0xa3, 0xb8], 200),
    ("superseded", [0xf5, 0x9e, 0x0b], 200),
    ("failed", [0xdc, 0x26, 0x26], 60),
    ("target", [0x7c, 0x3a, 0xed], 1000),
];

fn usage() -> &'static str {
    "usage: cargo xtask chart-test [--write-example]"
}

/// `cargo xtask chart-test`.
pub fn run(args: &[String]) -> Result<()> {
    let mut write_example = false;
    for arg in args {
        match arg.as_str() {
            "--write-example" => write_example = true,
            "-h" | "--help" => {
                println!("{}", usage());
                return Ok(());
            }
            other => bail!("unknown argument `{other}`\n{}", usage()),
        }
    }
    let bin = node::ensure_node()?;
    let chromium = ensure_chromium()?;
    let out = root().join("target").join("chart-test");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", rel(&out)))?;

    let nudge = packages::research_nudge();
    build::ensure_built(nudge)?;
    let html = out.join("synthetic-loop.html");
    let session = nudge
        .dir()
        .join("vectors")
        .join("sessions")
        .join("synthetic-loop.jsonl.zstd");
    util::run(
        Command::new(bin.join("node"))
            .current_dir(nudge.dir())
            .arg("bin/research-nudge.js")
            .arg("replay")
            .arg(&session)
            .arg("--html")
            .arg(&html),
    )?;
    let png = screenshot(&chromium, &html)?;
    let image =
        decode_png(&std::fs::read(&png)?).with_context(|| format!("decoding {}", rel(&png)))?;
    check_colors(&image, &NUDGE_COLORS)?;
    check_nudge(&image)?;
    println!("chart-test: {} checked", rel(&png));
    if write_example {
        example(&png, &nudge.dir().join("docs").join("replay-chart.png"))?;
    }

    let autoresearch = packages::autoresearch();
    build::ensure_built(autoresearch)?;
    let html = out.join("autoresearch-run.html");
    util::run(
        Command::new(bin.join("node"))
            .current_dir(autoresearch.dir())
            .arg("tests/support/example-run.mjs")
            .arg(&html),
    )?;
    let png = screenshot(&chromium, &html)?;
    let image =
        decode_png(&std::fs::read(&png)?).with_context(|| format!("decoding {}", rel(&png)))?;
    check_colors(&image, &RUN_COLORS)?;
    println!("chart-test: {} checked", rel(&png));
    if write_example {
        example(
            &png,
            &autoresearch.dir().join("docs").join("run-picture.png"),
        )?;
    }
    Ok(())
}

fn example(png: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to.parent().context("an example path has a folder")?)?;
    std::fs::copy(png, to)?;
    println!("chart-test: wrote {}", rel(to));
    Ok(())
}

/// The page, checked to be self-contained, as a screenshot next to it (`.png`).
fn screenshot(chromium: &Path, html: &Path) -> Result<PathBuf> {
    let page = std::fs::read_to_string(html).with_context(|| format!("reading {}", rel(html)))?;
    for banned in ["<script", "https://", " src=", "url("] {
        ensure!(
            !page.contains(banned),
            "{} is not self-contained: it has `{banned}`",
            rel(html)
        );
    }
    let png = html.with_extension("png");
    let _ = std::fs::remove_file(&png);
    let profile = html.with_file_name(format!("profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let url = format!("file://{}", html.display());
    let mut cmd = Command::new(chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .arg(format!("--window-size={WIDTH},{HEIGHT}"))
    .arg(format!("--screenshot={}", png.display()))
    .arg(&url);
    println!("$ {}", util::display(&cmd));
    let status = util::output(&mut cmd)?;
    let _ = std::fs::remove_dir_all(&profile);
    ensure!(
        png.is_file(),
        "chromium wrote no screenshot ({}): {}",
        status.status,
        String::from_utf8_lossy(&status.stderr)
    );
    Ok(png)
}

/// Chromium from Debian's packages: on `PATH`, or installed with apt-get (as root) when missing.
fn ensure_chromium() -> Result<PathBuf> {
    for name in ["chromium", "chromium-browser"] {
        if let Some(path) = util::which(name) {
            println!("chart-test: using {}", path.display());
            return Ok(path);
        }
    }
    let root_user = util::stdout_of(Command::new("id").arg("-u")).is_ok_and(|u| u.trim() == "0");
    if util::which("apt-get").is_none() || !root_user {
        bail!(
            "chart-test needs Chromium: install Debian's `chromium` package (apt-get install -y chromium), or put `chromium` on PATH"
        );
    }
    println!("chart-test: installing Debian's chromium with apt-get");
    util::run(
        Command::new("apt-get")
            .arg("update")
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    util::run(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "chromium"])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    util::which("chromium").context("apt-get installed chromium, but it is not on PATH")
}

/// A decoded image, 8-bit RGB per pixel.
struct Image {
    width: usize,
    height: usize,
    rgb: Vec<[u8; 3]>,
}

impl Image {
    fn at(&self, x: usize, y: usize) -> [u8; 3] {
        self.rgb[y * self.width + x]
    }
}

fn close(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.abs_diff(y) <= 10)
}

/// The size, and every color in enough pixels.
fn check_colors(image: &Image, expected: &[Expected]) -> Result<()> {
    ensure!(
        (image.width, image.height) == (WIDTH as usize, HEIGHT as usize),
        "screenshot is {}x{}, want {WIDTH}x{HEIGHT}",
        image.width,
        image.height
    );
    let mut missing = Vec::new();
    for &(what, color, min) in expected {
        let n = image.rgb.iter().filter(|&&p| close(p, color)).count();
        println!("chart-test: {what:<18} {n:>6} px (at least {min})");
        if n < min {
            missing.push(format!("{what}: {n} px < {min}"));
        }
    }
    ensure!(
        missing.is_empty(),
        "the picture lacks: {}",
        missing.join("; ")
    );
    Ok(())
}

/// research-nudge's chart: two separate reminder markers on the debt panel, and debt above the
/// debt threshold line somewhere.
fn check_nudge(image: &Image) -> Result<()> {
    // The debt threshold: the row with the most threshold-colored pixels in the upper half.
    let threshold = NUDGE_COLORS[1].1;
    let debt = NUDGE_COLORS[0].1;
    let nudge = NUDGE_COLORS[2].1;
    let rows = image.height / 2;
    let (threshold_y, _) = (0..rows)
        .map(|y| {
            let n = (0..image.width)
                .filter(|&x| close(image.at(x, y), threshold))
                .count();
            (y, n)
        })
        .max_by_key(|&(_, n)| n)
        .unwrap_or((0, 0));
    // The debt panel is 240 px high with the threshold inside it; the legend is above it.
    let panel_top = threshold_y.saturating_sub(140);
    let above = (panel_top..threshold_y.saturating_sub(3))
        .flat_map(|y| (0..image.width).map(move |x| (x, y)))
        .filter(|&(x, y)| close(image.at(x, y), debt))
        .count();
    ensure!(
        above >= 20,
        "no debt line above the debt threshold (row {threshold_y}): {above} px"
    );
    // Reminder markers: below the legend, the columns with red pixels form two separate groups.
    let columns: Vec<usize> = (0..image.width)
        .filter(|&x| (panel_top..image.height).any(|y| close(image.at(x, y), nudge)))
        .collect();
    let groups = columns.windows(2).filter(|w| w[1] - w[0] > 40).count() + 1;
    ensure!(
        !columns.is_empty() && groups >= 2,
        "want two separate reminders, found {groups} group(s) of reminder pixels"
    );
    println!(
        "chart-test: debt threshold at y={threshold_y}, {above} debt px above it, {groups} reminder groups"
    );
    Ok(())
}

/// Chromium's screenshot as RGB pixels.
fn decode_png(bytes: &[u8]) -> Result<Image> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().context("not a PNG file")?;
    let mut pixels = vec![0; reader.output_buffer_size().context("PNG too large")?];
    let frame = reader.next_frame(&mut pixels).context("decoding the PNG")?;
    let channels = match frame.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => bail!("PNG color type {other:?}, want RGB or RGBA"),
    };
    let rgb = pixels[..frame.buffer_size()]
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    Ok(Image {
        width: frame.width as usize,
        height: frame.height as usize,
        rgb,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn the_expected_colors_are_the_pages() {
        for (file, expected) in [
            (
                "crates/replay/src/research_nudge/chart.rs",
                &NUDGE_COLORS[..],
            ),
            ("crates/autoresearch/src/picture.rs", &RUN_COLORS[..]),
        ] {
            let source = std::fs::read_to_string(root().join(file)).unwrap();
            for (what, [r, g, b], _) in expected {
                let hex = format!("\"#{r:02x}{g:02x}{b:02x}\"");
                assert!(source.contains(&hex), "{file}: {what}: {hex}");
            }
        }
    }
}
