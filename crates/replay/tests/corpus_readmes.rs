//! The guards' README tables of the shared trajectory corpus are what the replay prints today.
//!
//! The corpus is not part of the repository (only a small fixture is, `fixtures/corpus`): this
//! test reads it from `$DSH_TRAJECTORY_CORPUS`, or from `../shared/corpus/trajectories` next to
//! the repository, and says so when neither exists.

use dsh_replay::corpus::{CorpusReplay, Guard, Half};
use std::fs;
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let dir = std::env::var_os("DSH_TRAJECTORY_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/trajectories")
        });
    dir.join("labels.json").is_file().then_some(dir)
}

/// Every run of the corpus as `(id, text)`, sorted by id.
fn runs(dir: &Path) -> Vec<(String, String)> {
    let mut runs = Vec::new();
    for source in fs::read_dir(dir.join("events")).unwrap() {
        let source = source.unwrap().path();
        let name = source.file_name().unwrap().to_string_lossy().into_owned();
        for file in fs::read_dir(&source).unwrap() {
            let file = file.unwrap().path();
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            runs.push((format!("{name}/{stem}"), fs::read_to_string(&file).unwrap()));
        }
    }
    runs.sort();
    runs
}

fn table<G: Guard>(mut replay: CorpusReplay<G>, dir: &Path, runs: &[(String, String)]) -> String {
    replay
        .set_labels(&fs::read_to_string(dir.join("labels.json")).unwrap())
        .unwrap();
    for (id, text) in runs {
        if replay.wants(id) {
            replay.start(id);
            for line in text.lines() {
                replay.feed_line(line).unwrap();
            }
            replay.end();
        }
    }
    let report = replay.report(false);
    report
        .lines()
        .filter(|l| l.starts_with('|'))
        .collect::<Vec<_>>()
        .join("\n")
}

fn readme(package: &str, name: &str) -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../packages/{package}/{name}"));
    fs::read_to_string(path).unwrap()
}

#[test]
fn the_readme_tables_are_the_replays_output() {
    let Some(dir) = corpus() else {
        eprintln!("the shared trajectory corpus is absent: the README tables are not checked");
        return;
    };
    let runs = runs(&dir);
    let gate = |input: gate::SettingsInput, half| {
        let settings = gate::Settings::new(&input).unwrap();
        table(
            dsh_replay::pain_point_check::CorpusReplay::with_settings(settings, Some(half)),
            &dir,
            &runs,
        )
    };
    let before = gate::SettingsInput {
        counting: gate::Counting::AnyFailure,
        ..gate::SettingsInput::default()
    };
    let pain_point_tables = [
        gate(before, Half::Report),
        gate(gate::SettingsInput::default(), Half::Report),
    ];
    let nudge = |half| {
        let row = config::research_nudge::RowConfig::default();
        table(
            dsh_replay::research_nudge::CorpusReplay::with_row(row, Some(half)),
            &dir,
            &runs,
        )
    };
    let nudge_tables = [nudge(Half::Report), nudge(Half::Tune)];
    for name in ["README.md", "README.zh-CN.md"] {
        let text = readme("pain-point-check", name);
        for table in &pain_point_tables {
            assert!(
                text.contains(table.as_str()),
                "pain-point-check/{name} lacks\n{table}"
            );
        }
        let text = readme("research-nudge", name);
        for table in &nudge_tables {
            assert!(
                text.contains(table.as_str()),
                "research-nudge/{name} lacks\n{table}"
            );
        }
    }
}
