//! Where the store lives: the DSH home by DSH's own rule (`resolveDshHome` in
//! `dsh-home-paths`), before the driver makes it absolute (`path.resolve`).

/// The DSH home's directory name under the user's home (DSH's `DSH_HOME_DIR_NAME`).
pub const DEFAULT_HOME_DIR: &str = ".dsh";

/// The DSH home: the configured path, else a non-blank `DSH_HOME` (`env`), else
/// `<os_home>/.dsh`; a leading `~`, `~/` or `~\` expands to `os_home`. An empty (or blank)
/// configured path counts as not configured. `sep` is the platform's path separator.
pub fn resolve_home(configured: &str, env: Option<&str>, os_home: &str, sep: &str) -> String {
    let chosen = if !configured.trim().is_empty() {
        configured
    } else if let Some(env) = env.filter(|e| !e.trim().is_empty()) {
        env
    } else {
        return join(os_home, DEFAULT_HOME_DIR, sep);
    };
    if chosen == "~" {
        return os_home.to_owned();
    }
    match chosen
        .strip_prefix("~/")
        .or_else(|| chosen.strip_prefix("~\\"))
    {
        Some(rest) => join(os_home, rest, sep),
        None => chosen.to_owned(),
    }
}

/// `DSH_HOME` as `memory_stats` may show it (`$DSH_HOME/…`): only when the variable is where
/// the home came from, that is when no path is configured.
pub fn shown_env<'a>(configured: &str, env: Option<&'a str>) -> Option<&'a str> {
    env.filter(|_| configured.trim().is_empty())
}

fn join(base: &str, rest: &str, sep: &str) -> String {
    if base.ends_with(['/', '\\']) || base.is_empty() {
        format!("{base}{rest}")
    } else {
        format!("{base}{sep}{rest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_follows_dsh_rule() {
        let h = |configured, env| resolve_home(configured, env, "/home/u", "/");
        assert_eq!(h("", None), "/home/u/.dsh");
        assert_eq!(
            h("", Some("  ")),
            "/home/u/.dsh",
            "a blank DSH_HOME is unset"
        );
        assert_eq!(h("", Some("/srv/dsh")), "/srv/dsh");
        assert_eq!(h("", Some("~/dsh")), "/home/u/dsh");
        assert_eq!(h("~", Some("/srv/dsh")), "/home/u", "config wins");
        assert_eq!(h("~/x", None), "/home/u/x");
        assert_eq!(h("~x", None), "~x", "only ~, ~/ and ~\\ expand");
        assert_eq!(
            resolve_home("~\\dsh", None, "C:\\Users\\u", "\\"),
            "C:\\Users\\u\\dsh"
        );
        assert_eq!(resolve_home("", None, "/", "/"), "/.dsh");
    }

    #[test]
    fn dsh_home_is_shown_only_when_it_chose_the_home() {
        assert_eq!(shown_env("", Some("/srv/dsh")), Some("/srv/dsh"));
        assert_eq!(shown_env("  ", Some("/srv/dsh")), Some("/srv/dsh"));
        assert_eq!(shown_env("~/x", Some("/srv/dsh")), None);
        assert_eq!(shown_env("", None), None);
    }
}
