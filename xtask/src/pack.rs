//! `cargo xtask pack`: one npm tarball per package, in `target/pack/`, each checked.
//!
//! For each package it builds `pkg/` when stale, copies in the files the repository keeps once at
//! the root (`LICENSE`, the package's row schema and the family patch schema, gitignored in the
//! package folder), runs the system `npm pack`, then reads the tarball itself and fails
//! on any deviation: a file outside the allowlist or missing from it, a packed file that differs
//! from the working tree, or a manifest that is not an ES module with `main`, `exports`, `bin`
//! and `dsh.bundle.patch` pointing at packed files, that has runtime dependencies or install
//! scripts, or that names a `workspace:`/`link:`/`file:` spec anywhere. Last, the unpacked
//! package is imported on the system Node the way DSH's loader would see it.

use crate::build;
use crate::node;
use crate::packages::{self, Package};
use crate::schema;
use crate::util::{self, rel, root};
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Files every package holds besides its `pkg/` glue, `bin/` commands and schemas.
const COMMON: [&str; 7] = [
    "package.json",
    "lib/index.js",
    "lib/core.js",
    "cordis.patch.yml",
    "README.md",
    "README.zh-CN.md",
    "LICENSE",
];
/// Dependency kinds npm installs at runtime: each must be absent or empty.
const RUNTIME_DEPENDENCIES: [&str; 4] = [
    "dependencies",
    "optionalDependencies",
    "bundleDependencies",
    "bundledDependencies",
];
/// Lifecycle scripts a tarball install would run (pnpm 11 refuses unapproved ones).
const INSTALL_SCRIPTS: [&str; 4] = ["preinstall", "install", "postinstall", "prepare"];
/// Spec prefixes that only resolve on the machine that packed.
const LOCAL_SPECS: [&str; 3] = ["workspace:", "link:", "file:"];

/// `cargo xtask pack [--package ROW]...`.
pub fn run(args: &[String]) -> Result<()> {
    let (chosen, rest) = packages::selected(args)?;
    if let Some(arg) = rest.first() {
        bail!("`cargo xtask pack` takes only --package ROW (got `{arg}`)");
    }
    clear_pack_dir()?;
    chosen.into_iter().try_for_each(|p| pack(p).map(|_| ()))
}

/// The output directory, `target/pack/`.
pub fn pack_dir() -> PathBuf {
    root().join("target").join("pack")
}

/// Where a package's tarball is unpacked for the import check (and the smoke's CLI runs).
pub fn unpacked_dir(package: &Package) -> PathBuf {
    pack_dir().join(package.row)
}

/// A packed and checked plugin package.
pub struct Packed {
    /// The `.tgz`.
    pub tarball: PathBuf,
    /// The package name from its manifest.
    pub name: String,
}

/// Empties `target/pack/` (a stale tarball must never be installed).
pub fn clear_pack_dir() -> Result<()> {
    let dir = pack_dir();
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", rel(&dir)))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", rel(&dir)))
}

/// Packs every package (after clearing `target/pack/`).
pub fn pack_all() -> Result<Vec<Packed>> {
    clear_pack_dir()?;
    packages::ALL.iter().map(pack).collect()
}

/// The files `package` must hold, exactly, relative to its folder.
fn allowlist(package: &Package) -> Vec<String> {
    let mut files: Vec<String> = COMMON.iter().map(|s| s.to_string()).collect();
    for glue in package.all_glue() {
        let name = glue.file_name().unwrap_or_default().to_string_lossy();
        files.push(format!("pkg/{name}"));
    }
    files.extend(package.bins.iter().map(|b| format!("bin/{b}.js")));
    files.extend(package.extra_files.iter().map(|f| f.to_string()));
    if let Ok(shared) = util::files_with_suffix(&packages::shim_common_dir(), ".js") {
        files.extend(shared.iter().map(|f| {
            let name = f.file_name().unwrap_or_default().to_string_lossy();
            format!("lib/common/{name}")
        }));
    }
    files.extend(
        schema::package_schemas(package.row)
            .iter()
            .map(|(name, _)| format!("schema/{name}")),
    );
    files
}

/// Copies the root's `LICENSE` and the package's schemas into its folder, where npm packs them.
fn stage_shared_files(package: &Package) -> Result<()> {
    let dir = package.dir();
    std::fs::copy(root().join("LICENSE"), dir.join("LICENSE"))
        .with_context(|| format!("copying LICENSE into {}", rel(&dir)))?;
    let schema_dir = dir.join("schema");
    std::fs::create_dir_all(&schema_dir)?;
    for (name, from) in schema::package_schemas(package.row) {
        std::fs::copy(&from, schema_dir.join(&name))
            .with_context(|| format!("copying {} into {}", rel(&from), rel(&schema_dir)))?;
    }
    Ok(())
}

/// Builds if needed, packs, checks; returns the tarball.
pub fn pack(package: &Package) -> Result<Packed> {
    build::ensure_built(package)?;
    stage_shared_files(package)?;
    let dir = pack_dir();
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", rel(&dir)))?;

    let mut cmd = node::npm();
    cmd.current_dir(package.dir()).args([
        "pack",
        "--json",
        "--ignore-scripts",
        "--pack-destination",
    ]);
    cmd.arg(&dir);
    println!("$ {} (in {})", util::display(&cmd), rel(&package.dir()));
    let json = util::stdout_of(&mut cmd)?;
    let report: Value = serde_json::from_str(&json)
        .with_context(|| format!("`npm pack --json` printed something else:\n{json}"))?;
    let filename = report[0]["filename"]
        .as_str()
        .context("`npm pack --json` named no filename")?;
    let tarball = dir.join(filename);
    if !tarball.is_file() {
        bail!(
            "npm pack reported {filename} but {} is missing",
            rel(&tarball)
        );
    }

    let entries = read_tgz(&tarball)?;
    let mut problems = Vec::new();
    check_files(package, &entries, &mut problems);
    let name = match entries.get("package.json") {
        Some(entry) => check_manifest(package, &entry.data, &entries, &mut problems),
        None => None,
    };
    if !problems.is_empty() {
        bail!(
            "{} is not the package we ship:\n{}",
            rel(&tarball),
            problems
                .iter()
                .map(|p| format!("  - {p}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    let name = name.context("package.json has no name")?;

    let unpacked = unpack(&entries, &unpacked_dir(package))?;
    import_check(package, &unpacked)?;

    let size = std::fs::metadata(&tarball)?.len();
    println!(
        "pack: {} ({} files, {size} bytes, {:.1} KiB): allowlist, manifest and import checks pass",
        rel(&tarball),
        entries.len(),
        size as f64 / 1024.0
    );
    Ok(Packed { tarball, name })
}

/// One regular file of the tarball.
pub struct Entry {
    data: Vec<u8>,
    mode: u32,
}

/// Reads a gzipped ustar archive into `path without the package/ prefix → entry`.
fn read_tgz(tarball: &Path) -> Result<BTreeMap<String, Entry>> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(tarball).with_context(|| format!("opening {}", rel(tarball)))?,
    )
    .read_to_end(&mut bytes)
    .with_context(|| format!("{} is not gzip", rel(tarball)))?;

    let field = |block: &[u8], at: usize, len: usize| -> String {
        let raw = &block[at..at + len];
        let end = raw.iter().position(|&b| b == 0).unwrap_or(len);
        String::from_utf8_lossy(&raw[..end]).into_owned()
    };
    let octal = |text: &str| -> Result<u64> {
        let text = text.trim_matches(|c: char| c == ' ' || c == '\0');
        if text.is_empty() {
            return Ok(0);
        }
        u64::from_str_radix(text, 8).with_context(|| format!("bad octal field `{text}`"))
    };

    let mut entries = BTreeMap::new();
    let mut offset = 0;
    let mut long_name: Option<String> = None;
    while offset + 512 <= bytes.len() {
        let block = &bytes[offset..offset + 512];
        if block.iter().all(|&b| b == 0) {
            break;
        }
        let size = octal(&field(block, 124, 12))? as usize;
        let kind = block[156];
        let mut name = field(block, 0, 100);
        let prefix = field(block, 345, 155);
        if !prefix.is_empty() {
            name = format!("{prefix}/{name}");
        }
        let data_at = offset + 512;
        let data = bytes
            .get(data_at..data_at + size)
            .with_context(|| format!("{} is truncated in {name}", rel(tarball)))?;
        offset = data_at + size.div_ceil(512) * 512;
        match kind {
            // A pax header: only its `path` record matters here.
            b'x' => {
                let text = String::from_utf8_lossy(data);
                long_name = text.lines().find_map(|line| {
                    let record = line.split_once(' ')?.1;
                    record.strip_prefix("path=").map(str::to_owned)
                });
            }
            b'0' | 0 => {
                let path = long_name.take().unwrap_or(name);
                let Some(inside) = path.strip_prefix("package/") else {
                    bail!("{} holds {path} outside package/", rel(tarball));
                };
                let mode = octal(&field(block, 100, 8))? as u32;
                entries.insert(
                    inside.to_owned(),
                    Entry {
                        data: data.to_vec(),
                        mode,
                    },
                );
            }
            b'5' => long_name = None,
            other => bail!(
                "{} holds an entry of tar type `{}` ({name}); npm pack writes files only",
                rel(tarball),
                other as char
            ),
        }
    }
    if entries.is_empty() {
        bail!("{} holds no files", rel(tarball));
    }
    Ok(entries)
}

/// The allowlist, both ways, and byte equality with the working tree.
fn check_files(package: &Package, entries: &BTreeMap<String, Entry>, problems: &mut Vec<String>) {
    let wanted = allowlist(package);
    for path in &wanted {
        let source = package.dir().join(path);
        match entries.get(path) {
            None if !source.is_file() => problems.push(format!(
                "{path} is missing: it is not in the working tree (it must be written before release)"
            )),
            None => problems.push(format!(
                "{path} is missing from the tarball (check `files` in package.json and .npmignore)"
            )),
            Some(entry) => match std::fs::read(&source) {
                Ok(bytes) if bytes == entry.data => {}
                Ok(_) => problems.push(format!(
                    "{path} in the tarball differs from the working tree (npm rewrote it?)"
                )),
                Err(e) => problems.push(format!("{path}: cannot read {}: {e}", rel(&source))),
            },
        }
    }
    for path in entries.keys() {
        if !wanted.contains(path) {
            problems.push(format!("{path} is packed but is not on the allowlist"));
        }
    }
}

/// The path a manifest field points to, if it is `./x` or `x` and `x` is packed.
fn packed_target<'a>(
    entries: &BTreeMap<String, Entry>,
    value: &'a Value,
    what: &str,
    problems: &mut Vec<String>,
) -> Option<&'a str> {
    let Some(spec) = value.as_str() else {
        problems.push(format!(
            "package.json {what} must be a path string (got {value})"
        ));
        return None;
    };
    let path = spec.strip_prefix("./").unwrap_or(spec);
    if !entries.contains_key(path) {
        problems.push(format!(
            "package.json {what} is {spec}, which is not in the tarball"
        ));
        return None;
    }
    Some(path)
}

/// Checks the packed manifest; returns the package name.
fn check_manifest(
    package: &Package,
    data: &[u8],
    entries: &BTreeMap<String, Entry>,
    problems: &mut Vec<String>,
) -> Option<String> {
    let manifest: Value = match serde_json::from_slice(data) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("package.json is not JSON: {e}"));
            return None;
        }
    };
    if manifest["type"] != "module" {
        problems.push(format!(
            "package.json type must be \"module\" (got {})",
            manifest["type"]
        ));
    }

    let main = packed_target(entries, &manifest["main"], "main", problems);
    if main.is_some_and(|m| m != "lib/index.js") {
        problems.push(format!(
            "package.json main must be ./lib/index.js, the plugin shim (got {})",
            manifest["main"]
        ));
    }
    let dot = match &manifest["exports"] {
        Value::Object(map) => map.get(".").cloned().unwrap_or(Value::Null),
        Value::Null => {
            problems.push("package.json has no exports".into());
            Value::Null
        }
        other => other.clone(),
    };
    // `"."` may be a path or a conditions object; every condition must name the shim.
    let dot_targets: Vec<Value> = match dot {
        Value::Object(conditions) => conditions.into_values().collect(),
        Value::Null => {
            problems.push("package.json exports has no \".\" entry".into());
            Vec::new()
        }
        other => vec![other],
    };
    for target in &dot_targets {
        let path = packed_target(entries, target, "exports[\".\"]", problems);
        if path.is_some() && path != main {
            problems.push(format!(
                "package.json exports[\".\"] is {target} but main is {}",
                manifest["main"]
            ));
        }
    }
    if let Value::Object(exports) = &manifest["exports"] {
        for (key, target) in exports {
            if key != "." {
                packed_target(entries, target, &format!("exports[{key:?}]"), problems);
            }
        }
    }

    match &manifest["bin"] {
        Value::Object(bins) if !bins.is_empty() => {
            for (command, target) in bins {
                let what = format!("bin[{command:?}]");
                if let Some(path) = packed_target(entries, target, &what, problems) {
                    let entry = &entries[path];
                    if !entry.data.starts_with(b"#!/usr/bin/env node") {
                        problems.push(format!("{path} ({what}) has no `#!/usr/bin/env node` line"));
                    }
                    if entry.mode & 0o111 == 0 {
                        problems.push(format!(
                            "{path} ({what}) is packed without execute bits (mode {:o})",
                            entry.mode
                        ));
                    }
                }
            }
            for command in package.bins {
                if !bins.contains_key(*command) {
                    problems.push(format!("package.json bin has no {command} command"));
                }
            }
        }
        other => problems.push(format!(
            "package.json bin must map {} to the CLI (got {other})",
            package.bins.join(", ")
        )),
    }

    if manifest["engines"]["dsh"] != crate::dsh::DSH_RANGE {
        problems.push(format!(
            "package.json engines.dsh must be {:?}, the range the family is tested for (got {})",
            crate::dsh::DSH_RANGE,
            manifest["engines"]["dsh"]
        ));
    }
    let patch = &manifest["dsh"]["bundle"]["patch"];
    if patch.is_null() {
        problems.push(
            "package.json has no dsh.bundle.patch (dsh plugin add would not add the layer)".into(),
        );
    } else if let Some(path) = packed_target(entries, patch, "dsh.bundle.patch", problems) {
        check_bundle_row(
            package.row,
            &entries[path].data,
            manifest["name"].as_str(),
            problems,
        );
    }

    for kind in RUNTIME_DEPENDENCIES {
        match &manifest[kind] {
            Value::Null => {}
            Value::Object(map) if map.is_empty() => {}
            other => problems.push(format!(
                "package.json has {kind} {other}: the plugin ships with zero runtime dependencies"
            )),
        }
    }
    for script in INSTALL_SCRIPTS {
        if !manifest["scripts"][script].is_null() {
            problems.push(format!(
                "package.json has a `{script}` script: tarball installs must need none"
            ));
        }
    }
    let mut local = Vec::new();
    local_specs(&manifest, "package.json", &mut local);
    problems.extend(local);

    match manifest["name"].as_str() {
        Some(name) if !name.is_empty() => Some(name.to_owned()),
        _ => {
            problems.push("package.json has no name".into());
            None
        }
    }
}

/// Every string anywhere in the manifest that starts with a machine-local spec.
fn local_specs(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            if let Some(prefix) = LOCAL_SPECS.iter().find(|p| s.starts_with(**p)) {
                out.push(format!(
                    "{at} is {s:?}: a `{prefix}` spec only resolves where it was packed"
                ));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                local_specs(item, &format!("{at}[{i}]"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                local_specs(item, &format!("{at}.{key}"), out);
            }
        }
        _ => {}
    }
}

/// The bundle patch inserts the package's row whose `name:` is this package (DSH imports the
/// row's `name` as a package specifier).
fn check_bundle_row(row: &str, patch: &[u8], package: Option<&str>, problems: &mut Vec<String>) {
    let text = String::from_utf8_lossy(patch);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let id_line = format!("- id: {row}");
    let Some(at) = lines.iter().position(|l| *l == id_line) else {
        problems.push(format!("cordis.patch.yml inserts no `{id_line}` row"));
        return;
    };
    let name = lines[at + 1..]
        .iter()
        .find_map(|l| l.strip_prefix("name:"))
        .map(|n| n.trim().trim_matches(['\'', '"']));
    if name != package {
        problems.push(format!(
            "cordis.patch.yml's {row} row is named {name:?} but the package is {package:?}"
        ));
    }
}

/// Writes the entries under `dir` (for the import check); returns `dir`.
fn unpack(entries: &BTreeMap<String, Entry>, dir: &Path) -> Result<PathBuf> {
    for (path, entry) in entries {
        let to = dir.join(path);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&to, &entry.data).with_context(|| format!("writing {}", rel(&to)))?;
    }
    Ok(dir.to_path_buf())
}

/// Imports the unpacked plugin on the system Node (the oldest the package supports) the way
/// DSH's loader unwraps it, and runs each CLI's help.
fn import_check(package: &Package, dir: &Path) -> Result<()> {
    let node = util::which("node").unwrap_or_else(|| PathBuf::from("node"));
    let script = r#"
const [base, row] = process.argv.slice(1)
const m = await import(new URL('lib/index.js', base))
const problems = []
if (m.default !== undefined) problems.push('has a default export (the loader would drop name/inject/Config)')
if (m.name !== row) problems.push(`name is ${JSON.stringify(m.name)}, not ${row}`)
if (typeof m.apply !== 'function') problems.push('apply is not a function')
if (typeof m.Config?.['~standard']?.validate !== 'function') problems.push('Config is not a Standard Schema')
else {
  const ok = m.Config['~standard'].validate({})
  if (ok.issues) problems.push(`the default config does not validate: ${JSON.stringify(ok.issues)}`)
  const bad = m.Config['~standard'].validate({ enabledd: true })
  if (!bad.issues?.length) problems.push('an unknown key validates')
}
if (problems.length) { console.error(problems.join('\n')); process.exit(1) }
"#;
    let base = format!("file://{}/", dir.display());
    let mut cmd = Command::new(&node);
    cmd.args(["--input-type=module", "-e", script, &base, package.row]);
    let out = util::output(&mut cmd)?;
    if !out.status.success() {
        bail!(
            "the packed {} does not import cleanly on {}:\n{}{}",
            package.npm,
            node.display(),
            String::from_utf8_lossy(&out.stderr).trim_end(),
            String::from_utf8_lossy(&out.stdout).trim_end()
        );
    }
    for command in package.bins {
        let mut help = Command::new(&node);
        help.arg(dir.join("bin").join(format!("{command}.js")))
            .arg("--help");
        util::stdout_of(&mut help)
            .with_context(|| format!("the packed {command} --help failed"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entries() -> BTreeMap<String, Entry> {
        let mut map = BTreeMap::new();
        for path in ["lib/index.js", "bin/research-nudge.js", "package.json"] {
            map.insert(
                path.to_owned(),
                Entry {
                    data: b"#!/usr/bin/env node\n".to_vec(),
                    mode: 0o755,
                },
            );
        }
        map.insert(
            "cordis.patch.yml".to_owned(),
            Entry {
                data: b"- insert:\n    - id: research-nudge\n      name: dsh-research-nudge\n"
                    .to_vec(),
                mode: 0o644,
            },
        );
        map
    }

    fn manifest() -> Value {
        json!({
            "name": "dsh-research-nudge",
            "type": "module",
            "main": "./lib/index.js",
            "exports": {".": "./lib/index.js", "./cordis.patch.yml": "./cordis.patch.yml"},
            "bin": {"research-nudge": "./bin/research-nudge.js"},
            "dsh": {"bundle": {"patch": "./cordis.patch.yml"}},
            "engines": {"node": ">=20", "dsh": crate::dsh::DSH_RANGE},
            "devDependencies": {"@deepseek-ai/cordis": "4.0.1"},
        })
    }

    fn problems(manifest: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        check_manifest(
            packages::research_nudge(),
            manifest.to_string().as_bytes(),
            &entries(),
            &mut problems,
        );
        problems
    }

    #[test]
    fn the_shipped_shape_passes() {
        assert_eq!(problems(&manifest()), Vec::<String>::new());
    }

    #[test]
    fn every_deviation_is_named() {
        let cases: [(&str, Value, &str); 10] = [
            ("type", json!("commonjs"), "type must be \"module\""),
            (
                "engines",
                json!({"node": ">=20"}),
                "engines.dsh must be \">=0.1.0-rc.8 <0.3.0-0\"",
            ),
            (
                "main",
                json!("./lib/other.js"),
                "main is ./lib/other.js, which is not in the tarball",
            ),
            (
                "exports",
                json!({".": "./bin/research-nudge.js"}),
                "but main is",
            ),
            ("bin", json!({}), "bin must map research-nudge"),
            ("dsh", json!({}), "no dsh.bundle.patch"),
            (
                "dependencies",
                json!({"left-pad": "1.0.0"}),
                "zero runtime dependencies",
            ),
            (
                "devDependencies",
                json!({"x": "file:../x"}),
                "package.json.devDependencies.x is \"file:../x\"",
            ),
            (
                "scripts",
                json!({"postinstall": "node x"}),
                "`postinstall` script",
            ),
            (
                "name",
                json!("other"),
                "row is named Some(\"dsh-research-nudge\") but the package is Some(\"other\")",
            ),
        ];
        for (key, value, wanted) in cases {
            let mut m = manifest();
            m[key] = value;
            let found = problems(&m);
            assert!(
                found.iter().any(|p| p.contains(wanted)),
                "{key}: {found:?} lacks {wanted:?}"
            );
        }
        let mut m = manifest();
        m["overrides"] = json!({"a": {"b": "workspace:*"}});
        assert!(
            problems(&m)
                .iter()
                .any(|p| p.contains("package.json.overrides.a.b"))
        );
        let mut m = manifest();
        m["peerDependencies"] = json!({"@deepseek-ai/cordis": "link:../cordis"});
        assert!(problems(&m).iter().any(|p| p.contains("`link:` spec")));
    }
}
