//! `cargo xtask chart-test`: `research-nudge replay --html` checked in a real headless browser.
//!
//! It draws the vector session `vectors/sessions/synthetic-loop.jsonl.zstd` (reminders, holds by
//! snooze and cooldown, a research reset, prompts, failures, a live reminder) with the real CLI
//! on Node 24, opens the page in Debian's Chromium (installed with apt-get when it is missing and
//! this runs as root), takes a screenshot, decodes the PNG and checks what a person would see:
//! the page's size, each fixed color of `crates/replay/src/research_nudge/chart.rs` in
//! enough pixels, two separate reminder markers, and the debt line crossing the threshold line.
//!
//! `--write-example` also copies the screenshot to `packages/research-nudge/docs/replay-chart.png`,
//! the image the package README links.

use crate::util::{self, rel, root};
use crate::{build, node, packages};
use anyhow::{Context, Result, bail, ensure};
use flate2::read::ZlibDecoder;
use std::io::Read;
use std::path::PathBuf;
use std::process::Command;

/// The browser window: the page is 1000 px wide plus margins.
const WIDTH: u32 = 1100;
const HEIGHT: u32 = 900;

/// The colors of the page (`chart::COLORS`) and how many pixels of each the screenshot must have.
const EXPECTED: [(&str, [u8; 3], usize); 10] = [
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
    let package = packages::research_nudge();
    build::ensure_built(package)?;
    let bin = node::ensure_node()?;
    let chromium = ensure_chromium()?;
    let out = root().join("target").join("chart-test");
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", rel(&out)))?;

    let html = out.join("synthetic-loop.html");
    let session = package
        .dir()
        .join("vectors")
        .join("sessions")
        .join("synthetic-loop.jsonl.zstd");
    util::run(
        Command::new(bin.join("node"))
            .current_dir(package.dir())
            .arg("bin/research-nudge.js")
            .arg("replay")
            .arg(&session)
            .arg("--html")
            .arg(&html),
    )?;
    let page = std::fs::read_to_string(&html).with_context(|| format!("reading {}", rel(&html)))?;
    for banned in ["<script", "https://", " src=", "url("] {
        ensure!(
            !page.contains(banned),
            "{} is not self-contained: it has `{banned}`",
            rel(&html)
        );
    }

    let png = out.join("synthetic-loop.png");
    let _ = std::fs::remove_file(&png);
    let profile = out.join(format!("profile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let url = format!("file://{}", html.display());
    let mut cmd = Command::new(&chromium);
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

    let image =
        decode_png(&std::fs::read(&png)?).with_context(|| format!("decoding {}", rel(&png)))?;
    check(&image)?;
    println!(
        "chart-test: {} checked ({}x{})",
        rel(&png),
        image.width,
        image.height
    );
    if write_example {
        let example = package.dir().join("docs").join("replay-chart.png");
        std::fs::create_dir_all(example.parent().unwrap_or(&out))?;
        std::fs::copy(&png, &example)?;
        println!("chart-test: wrote {}", rel(&example));
    }
    Ok(())
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

/// What a person would see: the size, every color in enough pixels, two separate reminder
/// markers on the debt panel, and debt above the debt threshold line somewhere.
fn check(image: &Image) -> Result<()> {
    ensure!(
        (image.width, image.height) == (WIDTH as usize, HEIGHT as usize),
        "screenshot is {}x{}, want {WIDTH}x{HEIGHT}",
        image.width,
        image.height
    );
    let mut counts = Vec::new();
    for (what, color, min) in EXPECTED {
        let n = image.rgb.iter().filter(|&&p| close(p, color)).count();
        println!("chart-test: {what:<18} {n:>6} px (at least {min})");
        counts.push((what, n, min));
    }
    let missing: Vec<String> = counts
        .iter()
        .filter(|(_, n, min)| n < min)
        .map(|(what, n, min)| format!("{what}: {n} px < {min}"))
        .collect();
    ensure!(
        missing.is_empty(),
        "the chart lacks: {}",
        missing.join("; ")
    );

    // The debt threshold: the row with the most threshold-colored pixels in the upper half.
    let threshold = EXPECTED[1].1;
    let debt = EXPECTED[0].1;
    let nudge = EXPECTED[2].1;
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

/// A minimal PNG decoder for Chromium's screenshots: 8-bit RGB or RGBA, not interlaced.
fn decode_png(bytes: &[u8]) -> Result<Image> {
    ensure!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG file");
    let mut pos = 8;
    let (mut width, mut height, mut channels) = (0usize, 0usize, 0usize);
    let mut data = Vec::new();
    while pos + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[pos..pos + 4].try_into()?) as usize;
        let kind = &bytes[pos + 4..pos + 8];
        let body = bytes
            .get(pos + 8..pos + 8 + len)
            .context("truncated PNG chunk")?;
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into()?) as usize;
                height = u32::from_be_bytes(body[4..8].try_into()?) as usize;
                let (depth, color, interlace) = (body[8], body[9], body[12]);
                ensure!(depth == 8, "PNG bit depth {depth}, want 8");
                ensure!(interlace == 0, "interlaced PNG");
                channels = match color {
                    2 => 3,
                    6 => 4,
                    other => bail!("PNG color type {other}, want RGB or RGBA"),
                };
            }
            b"IDAT" => data.extend_from_slice(body),
            b"IEND" => break,
            _ => {}
        }
        pos += 12 + len;
    }
    ensure!(width > 0 && height > 0, "PNG without a header");
    let mut raw = Vec::new();
    ZlibDecoder::new(&data[..]).read_to_end(&mut raw)?;
    let stride = width * channels;
    ensure!(
        raw.len() == height * (stride + 1),
        "PNG data is {} bytes, want {}",
        raw.len(),
        height * (stride + 1)
    );
    let mut pixels = vec![0u8; height * stride];
    for y in 0..height {
        let filter = raw[y * (stride + 1)];
        let line = &raw[y * (stride + 1) + 1..(y + 1) * (stride + 1)];
        for i in 0..stride {
            let a = if i >= channels {
                pixels[y * stride + i - channels]
            } else {
                0
            };
            let b = if y > 0 {
                pixels[(y - 1) * stride + i]
            } else {
                0
            };
            let c = if y > 0 && i >= channels {
                pixels[(y - 1) * stride + i - channels]
            } else {
                0
            };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => paeth(a, b, c),
                other => bail!("PNG filter type {other}"),
            };
            pixels[y * stride + i] = line[i].wrapping_add(predicted);
        }
    }
    let rgb = pixels
        .chunks_exact(channels)
        .map(|p| [p[0], p[1], p[2]])
        .collect();
    Ok(Image { width, height, rgb })
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::{Compression, write::ZlibEncoder};
    use std::io::Write;

    /// A 3x2 RGB PNG with the Sub and Paeth filters.
    fn png() -> Vec<u8> {
        let rows: [[u8; 10]; 2] = [
            [1, 10, 20, 30, 1, 1, 1, 5, 5, 5],
            [4, 1, 2, 3, 0, 0, 0, 0, 0, 0],
        ];
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        for row in rows {
            z.write_all(&row).unwrap();
        }
        let idat = z.finish().unwrap();
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut chunk = |kind: &[u8], body: &[u8]| {
            out.extend_from_slice(&(body.len() as u32).to_be_bytes());
            out.extend_from_slice(kind);
            out.extend_from_slice(body);
            out.extend_from_slice(&[0; 4]);
        };
        chunk(b"IHDR", &[0, 0, 0, 3, 0, 0, 0, 2, 8, 2, 0, 0, 0]);
        chunk(b"IDAT", &idat);
        chunk(b"IEND", &[]);
        out
    }

    #[test]
    fn decodes_filtered_rgb() {
        let image = decode_png(&png()).unwrap();
        assert_eq!((image.width, image.height), (3, 2));
        assert_eq!(image.rgb[0], [10, 20, 30]);
        assert_eq!(image.rgb[1], [11, 21, 31]);
        assert_eq!(image.rgb[2], [16, 26, 36]);
        // Paeth with zero deltas repeats the pixel above (a == c for a flat row above).
        assert_eq!(image.rgb[3], [11, 22, 33]);
        assert!(decode_png(b"nope").is_err());
    }

    #[test]
    fn the_expected_colors_are_the_charts() {
        let source =
            std::fs::read_to_string(root().join("crates/replay/src/research_nudge/chart.rs"))
                .unwrap();
        for (what, [r, g, b], _) in EXPECTED {
            let hex = format!("\"#{r:02x}{g:02x}{b:02x}\"");
            assert!(source.contains(&hex), "{what}: {hex}");
        }
    }
}
