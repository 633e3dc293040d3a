//! Which source files of a crate import which, and the cycles among them.
//!
//! ARCHITECTURE.md asks that no two files import each other: when two do, the shared piece wants
//! its own home one level down. [`import_cycles`] finds every group of files that reach each
//! other through their imports, so a crate's test can keep it that way.
//!
//! A file imports another when it names an item of the other's module by a path: `use` trees
//! (groups and globs expanded) and paths in code alike, starting from `crate::`, `super::`,
//! `self::` or a child module the file declares (`mod x;` then `x::f`). The path is resolved to
//! the deepest module that is a file of the crate, through `mod NAME { ... }` blocks inside a
//! file (where `super::` is the file itself). Comments and string literals are skipped.
//! Declaring a module (`mod x;`) is not importing it, and an inline module compiled for tests
//! only (`#[cfg(test)] mod tests { ... }`) is left out: tests may use any file of their crate.
//!
//! The crate root (`lib.rs`, `main.rs`) is a file like the others, seen through what it
//! re-exports: `crate::Name` of a `pub use a::Name` in the root imports `a` (the file that
//! defines it), so a cycle cannot hide behind a re-export, and `crate::f` of an item the root
//! defines imports the root. The root's own re-exports (`pub use`) are not imports of the root.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside the crate (`["mont", "ifma"]`); empty for the crate root.
type ModPath = Vec<String>;

/// The groups of files under `src` (a crate's `src` directory) that import each other, directly
/// or through others: each group sorted, as paths relative to `src`. Empty when the imports
/// form no cycle.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("testkit-imports-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// std::fs::write(dir.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
/// std::fs::write(dir.join("a.rs"), "use crate::b::g;\npub fn f() { g() }\n").unwrap();
/// std::fs::write(dir.join("b.rs"), "pub fn g() { crate::a::f() }\n").unwrap();
/// let cycles = hourglass_testkit::import_cycles(&dir).unwrap();
/// assert_eq!(cycles, vec![vec!["a.rs".into(), "b.rs".into()] as Vec<std::path::PathBuf>]);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn import_cycles(src: &Path) -> std::io::Result<Vec<Vec<PathBuf>>> {
    let graph = import_graph(src)?;
    let mut cycles: Vec<Vec<PathBuf>> = strongly_connected(&graph)
        .into_iter()
        .filter(|group| group.len() > 1)
        .map(|mut group| {
            group.sort();
            group
        })
        .collect();
    cycles.sort();
    Ok(cycles)
}

/// Which files of the crate under `src` each file imports (paths relative to `src`), after
/// resolving the crate root's re-exports: the graph [`import_cycles`] searches, for a message
/// that shows the edges of a cycle.
pub fn import_graph(src: &Path) -> std::io::Result<BTreeMap<PathBuf, BTreeSet<PathBuf>>> {
    let files = module_files(src)?;
    let texts = files
        .iter()
        .map(|(module, file)| Ok((module.clone(), std::fs::read_to_string(src.join(file))?)))
        .collect::<std::io::Result<BTreeMap<ModPath, String>>>()?;
    let root = texts
        .get(&Vec::new())
        .map(|text| imports_of(&[], text))
        .unwrap_or_default();
    let aliases = root_aliases(&files, &texts, &root.reexports);
    let mut graph = BTreeMap::new();
    for (module, text) in &texts {
        let targets = imports_of(module, text)
            .paths
            .into_iter()
            .filter_map(|path| {
                let target = deepest_file(&files, &path)?;
                match (target.is_empty(), path.first()) {
                    (true, Some(name)) => Some(aliases.get(name).cloned().unwrap_or(target)),
                    _ => Some(target),
                }
            })
            .filter(|t| t != module)
            .map(|t| files[&t].clone())
            .collect();
        graph.insert(files[module].clone(), targets);
    }
    Ok(graph)
}

/// What the crate root re-exports, by the name it is known by at the root: the file that
/// defines it. A glob (`pub use a::*`) re-exports the items its module's file defines.
fn root_aliases(
    files: &BTreeMap<ModPath, PathBuf>,
    texts: &BTreeMap<ModPath, String>,
    reexports: &[Reexport],
) -> BTreeMap<String, ModPath> {
    let mut aliases = BTreeMap::new();
    for r in reexports {
        let Some(target) = deepest_file(files, &r.path).filter(|t| !t.is_empty()) else {
            continue;
        };
        if r.glob {
            for name in defined_names(&texts[&target]) {
                aliases.entry(name).or_insert_with(|| target.clone());
            }
        } else if let Some(name) = r.alias.clone().or_else(|| r.path.last().cloned()) {
            aliases.insert(name, target);
        }
    }
    aliases
}

/// The names a file defines at its top level and might export (`fn`, `struct`, `enum`,
/// `trait`, `type`, `const`, `static`, `mod`, `macro_rules!`), roughly: enough for globs.
fn defined_names(text: &str) -> BTreeSet<String> {
    const KINDS: &[&str] = &[
        "fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union",
    ];
    tokens(text)
        .windows(2)
        .filter_map(|w| match w {
            [Token::Ident(kind), Token::Ident(name)] if KINDS.contains(&kind.as_str()) => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

/// Every `.rs` file under `src`, by the module it is.
fn module_files(src: &Path) -> std::io::Result<BTreeMap<ModPath, PathBuf>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).unwrap_or(&path).to_path_buf();
                files.insert(module_of(&rel), rel);
            }
        }
    }
    Ok(files)
}

/// The module a file is: `a/b.rs` and `a/b/mod.rs` are `a::b`, `lib.rs` and `main.rs` the root.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: ModPath = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.last().map(String::as_str) {
        Some("mod") => {
            parts.pop();
        }
        Some("lib" | "main") if parts.len() == 1 => parts.clear(),
        _ => {}
    }
    parts
}

/// The deepest module of `path` that is a file of the crate (the rest names items in it).
fn deepest_file(files: &BTreeMap<ModPath, PathBuf>, path: &[String]) -> Option<ModPath> {
    (0..=path.len())
        .rev()
        .map(|k| path[..k].to_vec())
        .find(|prefix| files.contains_key(prefix))
}

/// A token of Rust source, as far as imports are concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Semi,
    Comma,
    Star,
    Other,
}

/// The tokens of `text`, without comments, string and character literals.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(Token::Other);
        } else if c == 'r' && raw_string_start(&chars, i + 1) && !continues_identifier(&chars, i) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            i += 1 + hashes + 1;
            loop {
                if i >= chars.len() {
                    break;
                }
                let closing = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                if chars[i] == '"' && closing >= hashes {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            out.push(Token::Other);
        } else if c == '\'' {
            // A character literal ('a', '\n', '\u{1F600}'), or a lifetime ('a).
            if at(i + 1) == '\\' {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
            out.push(Token::Other);
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            // `$name`, a macro's metavariable, counts as a name (`mod $name { ... }`).
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Ident(chars[start..i].iter().collect()));
        } else {
            out.push(match c {
                ':' if at(i + 1) == ':' => {
                    i += 1;
                    Token::PathSep
                }
                '{' => Token::Open,
                '}' => Token::Close,
                ';' => Token::Semi,
                ',' => Token::Comma,
                '*' => Token::Star,
                _ => Token::Other,
            });
            i += 1;
        }
    }
    out
}

/// Whether `#...#"` starts at `i` (a raw string's hashes).
fn raw_string_start(chars: &[char], i: usize) -> bool {
    let hashes = chars[i..].iter().take_while(|&&h| h == '#').count();
    chars.get(i + hashes) == Some(&'"')
}

/// Whether the `r` at `i` is inside an identifier rather than a raw string's prefix (`br"` is a
/// prefix too).
fn continues_identifier(chars: &[char], i: usize) -> bool {
    let ident = |j: usize| chars[j].is_alphanumeric() || chars[j] == '_';
    match i {
        0 => false,
        1 => chars[0] != 'b' && ident(0),
        // `br"`: the `b` starts the prefix when nothing of a name comes before it.
        _ => ident(i - 1) && (chars[i - 1] != 'b' || ident(i - 2)),
    }
}

/// A `pub use` of a file: the absolute path it re-exports, the name it gives, and whether it is
/// a glob.
#[derive(Debug, Clone)]
struct Reexport {
    path: ModPath,
    alias: Option<String>,
    glob: bool,
}

/// What a file names: the absolute module paths (and items) it imports, and its re-exports
/// (`pub use`, `pub(crate) use`), which are the file's namespace rather than imports of it.
#[derive(Debug, Default)]
struct Imports {
    paths: Vec<ModPath>,
    reexports: Vec<Reexport>,
}

/// The absolute module paths (and items) the file of `module` names.
fn imports_of(module: &[String], text: &str) -> Imports {
    let toks = tokens(text);
    let ident = |t: Option<&Token>| match t {
        Some(Token::Ident(s)) => Some(s.clone()),
        _ => None,
    };
    // Child modules declared in the file itself (`mod x;`): `x::f` goes to them.
    let children: BTreeSet<String> = toks
        .windows(3)
        .filter_map(|w| match w {
            [Token::Ident(m), Token::Ident(name), Token::Semi] if m == "mod" => Some(name.clone()),
            _ => None,
        })
        .collect();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut found = Imports::default();
    let mut i = 0;
    while i < toks.len() {
        let here: ModPath = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(m, _)| m.clone()))
            .collect();
        match &toks[i] {
            Token::Open => depth += 1,
            Token::Close => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Token::Ident(k) if k == "mod" && is_test_module(&toks, i) => {
                // Skip the whole block: tests may use any file of their crate.
                let mut open = 0usize;
                let mut j = i + 2;
                while j < toks.len() {
                    match toks[j] {
                        Token::Open => open += 1,
                        Token::Close => {
                            open -= 1;
                            if open == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                i = j + 1;
                continue;
            }
            Token::Ident(k) if k == "mod" => {
                if let (Some(name), Some(Token::Open)) = (ident(toks.get(i + 1)), toks.get(i + 2)) {
                    depth += 1;
                    inline.push((name, depth));
                    i += 3;
                    continue;
                }
            }
            Token::Ident(k) if k == "use" => {
                let end = toks[i..]
                    .iter()
                    .position(|t| *t == Token::Semi)
                    .map_or(toks.len(), |p| i + p);
                let mut trees = Vec::new();
                use_tree(&toks[i + 1..end], Vec::new(), &mut trees);
                let public = is_pub(&toks[..i]);
                for tree in trees {
                    // A module's re-exports are imports too (it names the other file); the
                    // root's are its namespace only, and say what `crate::Name` is.
                    if let Some(path) = resolve(&here, &tree.path, &children) {
                        if public {
                            found.reexports.push(Reexport {
                                path: path.clone(),
                                alias: tree.alias,
                                glob: tree.glob,
                            });
                        }
                        if !(public && here.is_empty()) {
                            found.paths.push(path);
                        }
                    }
                }
                i = end + 1;
                continue;
            }
            Token::Ident(first) if i == 0 || toks[i - 1] != Token::PathSep => {
                let mut path = vec![first.clone()];
                let mut j = i + 1;
                while toks.get(j) == Some(&Token::PathSep) {
                    match ident(toks.get(j + 1)) {
                        Some(seg) => path.push(seg),
                        None => break,
                    }
                    j += 2;
                }
                if path.len() > 1 {
                    found.paths.extend(resolve(&here, &path, &children));
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Whether the `mod` at `i` opens an inline module compiled for tests only (`#[cfg(test)] mod
/// tests { ... }`, `#[cfg(all(test, ...))]`): its attribute, just before it, names `cfg` then
/// `test`.
fn is_test_module(toks: &[Token], i: usize) -> bool {
    if !matches!(
        (toks.get(i + 1), toks.get(i + 2)),
        (Some(Token::Ident(_)), Some(Token::Open))
    ) {
        return false;
    }
    let attribute: Vec<&Token> = toks[..i]
        .iter()
        .rev()
        .take(16)
        .take_while(|t| matches!(t, Token::Ident(_) | Token::Other | Token::Comma))
        .collect();
    let cfg = attribute
        .iter()
        .position(|t| matches!(t, Token::Ident(c) if c == "cfg"));
    let test = attribute
        .iter()
        .position(|t| matches!(t, Token::Ident(c) if c == "test"));
    matches!((cfg, test), (Some(c), Some(t)) if t < c)
}

/// Whether the tokens before a `use` make it public (`pub`, `pub(crate)`, `pub(super)`).
fn is_pub(before: &[Token]) -> bool {
    match before {
        [.., Token::Ident(p)] => p == "pub",
        [.., Token::Ident(p), Token::Other, Token::Ident(_), Token::Other] => p == "pub",
        _ => false,
    }
}

/// One path of a `use` tree: the path, the name it is given (`as`), whether it is a glob.
struct UseTree {
    path: Vec<String>,
    alias: Option<String>,
    glob: bool,
}

/// The paths of a `use` tree (`a::{b, c::*}` gives `a::b` and `a::c`), after `prefix`.
fn use_tree(toks: &[Token], prefix: Vec<String>, out: &mut Vec<UseTree>) {
    let mut path = prefix;
    let mut alias = None;
    let mut glob = false;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Token::Ident(s) if s == "as" => {
                if let Some(Token::Ident(a)) = toks.get(i + 1) {
                    alias = Some(a.clone());
                }
                break;
            }
            Token::Ident(s) => path.push(s.clone()),
            Token::Star => glob = true,
            Token::PathSep => {}
            Token::Open => {
                // The group up to its matching brace, split at its top-level commas.
                let mut depth = 0;
                let mut start = i + 1;
                for j in i..toks.len() {
                    match toks[j] {
                        Token::Open => depth += 1,
                        Token::Close => {
                            depth -= 1;
                            if depth == 0 {
                                use_tree(&toks[start..j], path.clone(), out);
                                return;
                            }
                        }
                        Token::Comma if depth == 1 => {
                            use_tree(&toks[start..j], path.clone(), out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            _ => break,
        }
        i += 1;
    }
    out.push(UseTree { path, alias, glob });
}

/// `path` as seen from module `here`, made absolute; `None` for paths outside the crate.
fn resolve(here: &[String], path: &[String], children: &BTreeSet<String>) -> Option<ModPath> {
    let (first, rest) = path.split_first()?;
    let mut base: ModPath = match first.as_str() {
        "crate" => Vec::new(),
        "self" | "super" => here.to_vec(),
        child if children.contains(child) => {
            let mut p = here.to_vec();
            p.push(child.to_string());
            p
        }
        _ => return None,
    };
    if first == "super" {
        base.pop()?;
    }
    let mut rest = rest.iter().peekable();
    while let Some(seg) = rest.next_if(|s| *s == "super" || *s == "self") {
        if seg == "super" {
            base.pop()?;
        }
    }
    base.extend(rest.cloned());
    Some(base)
}

/// Tarjan's strongly connected components of the graph.
fn strongly_connected(edges: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct State<'a> {
        edges: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on_stack: BTreeSet<&'a PathBuf>,
        groups: Vec<Vec<PathBuf>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            let Some((w, _)) = edges.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                group.push(w.clone());
                if w == v {
                    break;
                }
            }
            s.groups.push(group);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        groups: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_with(files: &[(&str, &str)]) -> PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "testkit-imports-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn cycles(files: &[(&str, &str)]) -> Vec<Vec<String>> {
        let dir = crate_with(files);
        let found = import_cycles(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        found
            .into_iter()
            .map(|g| g.iter().map(|p| p.display().to_string()).collect())
            .collect()
    }

    #[test]
    fn finds_a_cycle_through_a_parent_module_and_a_child() {
        // The shape hourglass-arith had: ifma -> secret -> mont -> ifma.
        let found = cycles(&[
            ("lib.rs", "pub mod mont;\npub mod secret;\n"),
            (
                "mont/mod.rs",
                "pub mod ifma;\npub fn inv() {}\nfn f() { ifma::g() }\n",
            ),
            ("mont/ifma.rs", "pub fn g() { crate::secret::h() }\n"),
            ("secret.rs", "pub fn h() { crate::mont::inv() }\n"),
        ]);
        assert_eq!(
            found,
            vec![vec!["mont/ifma.rs", "mont/mod.rs", "secret.rs"]]
        );
    }

    #[test]
    fn use_groups_super_and_inline_modules_are_followed() {
        let found = cycles(&[
            ("main.rs", "mod a;\nmod b;\nmod c;\n"),
            ("a.rs", "use crate::{c::x, b::{self, y as z}};\n"),
            // `super::` in a file's inline test module is the file itself: no edge to the root.
            (
                "b.rs",
                "pub fn y() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n",
            ),
            (
                "c.rs",
                "pub fn x() {}\n/* crate::a::f */\nconst S: &str = \"crate::a::f\";\n",
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
        let found = cycles(&[
            ("main.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::{c, b::{self, y as z}};\n"),
            (
                "b.rs",
                "mod inner {\n    fn f() { super::super::a::g() }\n}\n",
            ),
        ]);
        assert_eq!(found, vec![vec!["a.rs", "b.rs"]]);
    }

    #[test]
    fn a_module_made_by_a_macro_is_its_own_scope() {
        // `super::` inside `mod $name { ... }` is the file that holds the macro.
        let found = cycles(&[
            (
                "lib.rs",
                "pub mod m;
",
            ),
            (
                "m/mod.rs",
                "pub mod k;
fn f() { k::g() }
",
            ),
            (
                "m/k.rs",
                "macro_rules! kernel {
    ($name:ident) => {
        mod $name {
            use super::*;
        }
    };
}
pub fn g() {}
",
            ),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn declarations_and_re_exports_are_not_imports_of_the_root() {
        let found = cycles(&[
            ("lib.rs", "mod a;\npub use a::f;\npub type Result = ();\n"),
            ("a.rs", "pub fn f() -> crate::Result {}\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_cycle_through_a_re_export_of_the_root_is_found() {
        // b names `crate::F`, which the root re-exports from a (under another name too).
        for (lib, b) in [
            (
                "mod a;\nmod b;\npub use a::F;\n",
                "fn g() { crate::F::new() }\n",
            ),
            ("mod a;\nmod b;\npub use a::F as G;\n", "use crate::G;\n"),
            ("mod a;\nmod b;\npub use a::*;\n", "use crate::F;\n"),
            (
                "mod a;\nmod b;\npub(crate) use a::{F};\n",
                "use crate::F;\n",
            ),
        ] {
            let found = cycles(&[
                ("lib.rs", lib),
                ("a.rs", "pub struct F;\nfn f() { crate::b::g() }\n"),
                ("b.rs", b),
            ]);
            assert_eq!(found, vec![vec!["a.rs", "b.rs"]], "{lib} / {b}");
        }
    }

    #[test]
    fn inline_test_modules_are_left_out() {
        for attribute in [
            "#[cfg(test)]",
            "#[cfg(all(test, target_arch = \"x86_64\"))]",
        ] {
            let found = cycles(&[
                ("lib.rs", "mod a;\nmod b;\n"),
                (
                    "a.rs",
                    &format!(
                        "pub fn f() {{}}\n{attribute}\nmod tests {{\n    use crate::b::g;\n}}\n"
                    ),
                ),
                ("b.rs", "pub fn g() { crate::a::f() }\n"),
            ]);
            assert!(found.is_empty(), "{attribute}: {found:?}");
        }
        // Code after the test module is read again.
        let found = cycles(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            (
                "a.rs",
                "#[cfg(test)]\nmod tests {\n    fn t() {}\n}\npub fn f() { crate::b::g() }\n",
            ),
            ("b.rs", "pub fn g() { crate::a::f() }\n"),
        ]);
        assert_eq!(found, vec![vec!["a.rs", "b.rs"]]);
    }

    #[test]
    fn the_roots_own_code_is_a_file_like_the_others() {
        // The root's function uses a, which uses the root's function.
        let found = cycles(&[
            (
                "main.rs",
                "mod a;\nfn helper() {}\nfn main() { a::run() }\n",
            ),
            ("a.rs", "pub fn run() { crate::helper() }\n"),
        ]);
        assert_eq!(found, vec![vec!["a.rs", "main.rs"]]);
        // A root that only declares and re-exports is in no cycle.
        let found = cycles(&[
            (
                "lib.rs",
                "mod a;\nmod b;\npub use a::run;\npub use b::Thing;\n",
            ),
            ("a.rs", "pub fn run() -> crate::Thing { crate::b::Thing }\n"),
            ("b.rs", "pub struct Thing;\n"),
        ]);
        assert!(found.is_empty(), "{found:?}");
    }
}
