//! Run by `cargo xtask extraction` (in release): writes, for each HTML file named in a list, the
//! text of `format: "text"` (`N.ours.txt`, the main content) and of `format: "page"`
//! (`N.page.txt`, the whole page as text), and `timings.json`: for each page its size in bytes
//! and the main-content extraction's time in milliseconds (the fastest of three runs).
//!
//! usage: extract_pages LIST OUT (LIST: one path a line; N is the line's index)

use limit_break_fetch::main_content;
use std::time::Instant;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, list, out] = args.as_slice() else {
        eprintln!("usage: extract_pages LIST OUT");
        std::process::exit(2);
    };
    let mut timings = Vec::new();
    for (index, path) in std::fs::read_to_string(list)?.lines().enumerate() {
        let page = String::from_utf8_lossy(&std::fs::read(path)?).into_owned();
        let mut fastest = f64::INFINITY;
        let mut text = String::new();
        for _ in 0..3 {
            let started = Instant::now();
            text = main_content::to_text(&page);
            fastest = fastest.min(started.elapsed().as_secs_f64() * 1000.0);
        }
        std::fs::write(format!("{out}/{index}.ours.txt"), text)?;
        std::fs::write(
            format!("{out}/{index}.page.txt"),
            main_content::page_text(&page),
        )?;
        timings.push(format!("[{}, {fastest:.4}]", page.len()));
    }
    std::fs::write(
        format!("{out}/timings.json"),
        format!("[{}]", timings.join(",\n")),
    )
}
