//! Node 24, pnpm and dsh as the caller installed them (xtask's `dsh::ensure`), and the commands
//! that run them with every cache inside `.cache/dsh/`.

use crate::util::cache_dir;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Node 24, pnpm and dsh, ready to run.
pub struct Toolchain {
    node_bin: PathBuf,
    pnpm_bin: PathBuf,
    dsh_js: PathBuf,
}

/// `.cache/dsh/`: dsh's install and every cache its commands use.
pub fn dsh_dir() -> PathBuf {
    cache_dir().join("dsh")
}

impl Toolchain {
    /// The toolchain of Node 24's `bin/` folder, pnpm's folder and dsh's `lib/bin.js`.
    pub fn new(node_bin: PathBuf, pnpm_bin: PathBuf, dsh_js: PathBuf) -> Self {
        Self {
            node_bin,
            pnpm_bin,
            dsh_js,
        }
    }

    /// `pnpm`.
    pub fn pnpm(&self) -> PathBuf {
        self.pnpm_bin.join("pnpm")
    }

    /// dsh's `lib/bin.js`.
    pub fn dsh_js(&self) -> &Path {
        &self.dsh_js
    }

    /// `program` with Node 24 and pnpm first on PATH and every cache, config, data and state
    /// directory inside `.cache/dsh/` (nothing lands in `$HOME`).
    pub fn command(&self, program: &Path) -> Command {
        let dir = dsh_dir();
        let xdg = dir.join("xdg");
        let mut cmd = Command::new(program);
        let path = std::env::join_paths(
            [self.node_bin.clone(), self.pnpm_bin.clone()]
                .into_iter()
                .chain(
                    std::env::var_os("PATH")
                        .iter()
                        .flat_map(std::env::split_paths),
                ),
        )
        .expect("PATH entries hold no separator");
        cmd.env("PATH", path)
            .env("XDG_CACHE_HOME", xdg.join("cache"))
            .env("XDG_DATA_HOME", xdg.join("data"))
            .env("XDG_STATE_HOME", xdg.join("state"))
            .env("XDG_CONFIG_HOME", xdg.join("config"))
            .env("PNPM_HOME", dir.join("pnpm-home"))
            .env("npm_config_cache", cache_dir().join("npm"))
            .env("npm_config_store_dir", dir.join("store"))
            .env("pnpm_config_store_dir", dir.join("store"))
            .env("npm_config_update_notifier", "false")
            .env("pnpm_config_update_notifier", "false")
            .env("DSH_TELEMETRY_DISABLED", "1")
            // The launcher's own environment must not leak a real model, key or home in.
            .env_remove("DEEPSEEK_BASE_URL")
            .env_remove("DEEPSEEK_SEARCH_BASE_URL")
            .env_remove("DEEPSEEK_API_KEY")
            .env_remove("DSH_HOME");
        cmd
    }

    /// `node <dsh>/lib/bin.js` on Node 24 with `DSH_HOME=home` (when given).
    pub fn dsh(&self, home: Option<&Path>) -> Command {
        let mut cmd = self.command(&self.node_bin.join("node"));
        cmd.arg(&self.dsh_js);
        if let Some(home) = home {
            cmd.env("DSH_HOME", home);
        }
        cmd
    }

    /// Node 24's `node`.
    pub fn node(&self) -> PathBuf {
        self.node_bin.join("node")
    }
}
