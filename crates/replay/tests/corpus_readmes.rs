//! The guards' README tables of the shared trajectory corpus are what the replay prints today.
//!
//! The corpora are not part of the repository (only a small fixture is, `fixtures/corpus`): this
//! test reads them from `$DSH_TRAJECTORY_CORPUS` (and `$DSH_SWEAGENT_CORPUS`), or from
//! `../shared/corpus/trajectories` (and `trajectories-sweagent`) next to the repository, and says
//! so when one is absent.

use dsh_replay::corpus::{CorpusReplay, Guard, Half};
use std::fs;
use std::path::{Path, PathBuf};

fn corpus(variable: &str, folder: &str) -> Option<PathBuf> {
    let dir = std::env::var_os(variable)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/corpus")
                .join(folder)
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

/// pain-point-check's tables of one corpus's report half: 0.2's counting, 0.3's, the default.
fn gate_tables(dir: &Path, runs: &[(String, String)]) -> Vec<String> {
    [
        gate::Counting::AnyFailure,
        gate::Counting::SameProblem,
        gate::Counting::NoProgress,
    ]
    .into_iter()
    .map(|counting| {
        let settings = gate::Settings::default().with_counting(counting);
        table(
            dsh_replay::pain_point_check::CorpusReplay::with_settings(settings, Some(Half::Report)),
            dir,
            runs,
        )
    })
    .collect()
}

fn assert_tables(package: &str, tables: &[String]) {
    for name in ["README.md", "README.zh-CN.md"] {
        let text = readme(package, name);
        for table in tables {
            assert!(
                text.contains(table.as_str()),
                "{package}/{name} lacks\n{table}"
            );
        }
    }
}

#[test]
fn the_sweagent_tables_are_the_replays_output() {
    let Some(dir) = corpus("DSH_SWEAGENT_CORPUS", "trajectories-sweagent") else {
        eprintln!("the shared SWE-agent corpus is absent: its README tables are not checked");
        return;
    };
    assert_tables("pain-point-check", &gate_tables(&dir, &runs(&dir)));
}

#[test]
fn the_readme_tables_are_the_replays_output() {
    let Some(dir) = corpus("DSH_TRAJECTORY_CORPUS", "trajectories") else {
        eprintln!("the shared trajectory corpus is absent: the README tables are not checked");
        return;
    };
    let runs = runs(&dir);
    let pain_point_tables = gate_tables(&dir, &runs);
    let nudge = |half| {
        let row = config::research_nudge::RowConfig::default();
        table(
            dsh_replay::research_nudge::CorpusReplay::with_row(row, Some(half)),
            &dir,
            &runs,
        )
    };
    let nudge_tables = [nudge(Half::Report), nudge(Half::Tune)];
    assert_tables("pain-point-check", &pain_point_tables);
    assert_tables("research-nudge", &nudge_tables);
}
