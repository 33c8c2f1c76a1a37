// The settings the core's tests run under: the row's shipped defaults (`crates/config` owns them;
// the core has none, and `config`'s tests check that these equal them).

use autoresearch_core::{Limits, Retention, Settings, run::MAX_ATTEMPTS_PER_EXPERIMENT};

/// Spec limits as the row's defaults set them.
pub fn limits() -> Limits {
    Limits {
        default_max_experiments: 20,
        max_experiments: 100,
        default_timeout_ms: 900_000,
        max_timeout_ms: 3_600_000,
        max_parallelism: 4,
    }
}

/// Settings as the row's defaults set them.
pub fn settings() -> Settings {
    Settings {
        limits: limits(),
        state_root: "dsh-autoresearch".into(),
        branch_prefix: "autoresearch/".into(),
        termination_grace_ms: 5_000,
        max_stdout_bytes: 1 << 20,
        max_stderr_bytes: 1 << 20,
        max_active_runs_per_repository: 1,
        max_attempts_per_experiment: MAX_ATTEMPTS_PER_EXPERIMENT,
        max_handoff_chars: 16_384,
        export_tsv: true,
        retention: Retention {
            artifact_retention_days: 30,
            retain_failed_artifacts: true,
            retain_worktrees: true,
            cleanup_worktrees_on_success: false,
            tsv_retention_days: 30,
        },
    }
}
