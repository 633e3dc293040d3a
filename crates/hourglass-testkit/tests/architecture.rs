//! docs/ARCHITECTURE.md stays true: its table of crates names exactly the workspace's members,
//! each in one layer, and no crate depends on a crate of a layer above its own (nor, outside
//! tests, on the test kit).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, bottom up, as the document names them.
const LAYERS: [&str; 5] = ["dev", "ground", "formats", "schemes", "surfaces"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The crates the document's table lists, with their layer.
fn documented() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md is readable");
    let table = text
        .split("<!-- crate list:")
        .nth(1)
        .expect("the document marks its crate list");
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((name.to_string(), cells.get(2)?.to_string()))
        })
        .collect()
}

/// A member's manifest: its package name, and the crates it depends on (normal dependencies
/// only; dev-dependencies are tests').
struct Member {
    name: String,
    depends_on: Vec<String>,
}

fn members() -> Vec<Member> {
    let workspace: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .expect("Cargo.toml is readable")
        .parse()
        .expect("Cargo.toml is TOML");
    let paths = workspace["workspace"]["members"]
        .as_array()
        .expect("the workspace lists its members");
    paths
        .iter()
        .map(|p| {
            let dir = root().join(p.as_str().expect("a member is a path"));
            let manifest: toml::Table = std::fs::read_to_string(dir.join("Cargo.toml"))
                .expect("a member's Cargo.toml is readable")
                .parse()
                .expect("a member's Cargo.toml is TOML");
            let name = manifest["package"]["name"]
                .as_str()
                .expect("a package has a name")
                .to_string();
            let depends_on = manifest
                .get("dependencies")
                .and_then(toml::Value::as_table)
                .map(|deps| deps.keys().cloned().collect())
                .unwrap_or_default();
            Member { name, depends_on }
        })
        .collect()
}

#[test]
fn the_documented_crates_are_the_workspace_members() {
    let documented = documented();
    let mut listed: Vec<&String> = documented.keys().collect();
    let mut actual: Vec<String> = members().into_iter().map(|m| m.name).collect();
    listed.sort();
    actual.sort();
    assert_eq!(
        listed,
        actual.iter().collect::<Vec<_>>(),
        "docs/ARCHITECTURE.md's table of crates and the workspace's members differ"
    );
    for (name, layer) in &documented {
        assert!(
            LAYERS.contains(&layer.as_str()),
            "{name}: layer {layer:?} is none of {LAYERS:?}"
        );
    }
}

#[test]
fn no_crate_depends_on_a_layer_above_its_own() {
    let documented = documented();
    let rank = |name: &str| {
        let layer = documented
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in docs/ARCHITECTURE.md"));
        LAYERS
            .iter()
            .position(|l| l == layer)
            .unwrap_or_else(|| panic!("{name}: unknown layer {layer}"))
    };
    let members = members();
    let ours: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let mut upward = Vec::new();
    for m in &members {
        for dep in m.depends_on.iter().filter(|d| ours.contains(&d.as_str())) {
            let test_kit_outside_tests =
                dep == "hourglass-testkit" && m.name != "hourglass-testkit";
            if test_kit_outside_tests || (rank(dep) > rank(&m.name)) {
                upward.push(format!("{} -> {dep}", m.name));
            }
        }
    }
    assert!(upward.is_empty(), "dependencies that point up: {upward:?}");
}
