//! Keeps docs/ARCHITECTURE.md honest: lower layers must not import higher ones, and the table
//! "Dependency direction, concretely" lists exactly what each module uses.
//!
//! The sources are parsed with `syn` rather than matched line by line, because a text match
//! misses what Rust allows: grouped imports (`use crate::{tui::X, apply}`), imports spread over
//! several lines, `super::super::...` climbing out of a module, and `crate::tui::f()` written
//! inline in an expression or a type without any `use`. Every path that starts with `crate`,
//! `super` or `self` (in `use` trees, in code, and in the tokens of macro calls such as
//! `format!`) is resolved to the top-level module it lands in. Importing the crate root whole
//! (`use crate::*;`, `use super::*;` from a top-level module, `use crate as x;`,
//! `extern crate self as x;`) is reported as a use of "the crate root", which no row may name,
//! and a path through such a name (`x::tui::draw()`) is resolved as if it said `crate`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::{self, Visit};

/// The layers from the bottom up. A module may use only modules of a lower layer: modules of
/// one layer are peers and never import each other (`tui` and `headless`, `runner` and
/// `recipe`). The table in docs/ARCHITECTURE.md says what each module may use; this order is
/// the second lock, so that widening a row upward means editing this file too, in review.
const LAYERS: &[&[&str]] = &[
    &["exec", "fsutil", "jsonl", "model", "sanitize"],
    &["example", "workspace", "provider", "check", "context"],
    &["apply", "tools", "config", "session"],
    &["agent", "review", "stats", "mcp"],
    &["runner", "recipe"],
    // The one session engine under every front end.
    &["engine"],
    &["headless", "tui"],
    // The binary: its `crate::` is the binary crate, and it may use anything in the library.
    &["cli"],
];

/// One path in a source file that reaches a top-level module of the crate.
#[derive(Debug, Clone)]
struct Import {
    file: PathBuf,
    line: usize,
    /// The top-level module the file belongs to.
    from: String,
    /// The top-level module the path lands in (after `super` and `self` are resolved).
    to: String,
    /// The resolved path, from the crate root: `tui::app::App`.
    path: String,
}

impl std::fmt::Display for Import {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.to == CRATE_ROOT {
            return write!(
                f,
                "{}:{}: {} uses {} (`{}`: name the modules it needs instead)",
                self.file.display(),
                self.line,
                self.from,
                self.to,
                self.path
            );
        }
        write!(
            f,
            "{}:{}: {} uses {} (crate::{})",
            self.file.display(),
            self.line,
            self.from,
            self.to,
            self.path
        )
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file below `src`: `src/a/b.rs` is `a::b`, `src/a/mod.rs` and `src/a.rs`
/// are `a`, `src/lib.rs` and `src/main.rs` are the root; each after the crate's `prefix`.
fn module_of(src: &Path, prefix: &[String], file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        parts.clear();
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    [prefix, &parts].concat()
}

/// What an import of the crate root is reported as: no row may name it, since a module that
/// holds the whole crate under one name (`use crate::*;`, `use crate as x;`) can reach any
/// module without naming it again.
const CRATE_ROOT: &str = "the crate root";

/// One crate of the workspace as the checker sees it: its source folder, and the module of the
/// one tree the table describes that its `crate::` stands for (the TUI crate's root is `tui`;
/// the core crate's and the binary package's are the root, the binary package re-exporting the
/// core's modules under their own names).
struct Source {
    src: PathBuf,
    prefix: Vec<String>,
}

/// The workspace's crates: the core, the TUI, and the binary package (`headless`, `cli`).
fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    vec![
        Source {
            src: root.join("crates/core/src"),
            prefix: Vec::new(),
        },
        Source {
            src: root.join("crates/tui/src"),
            prefix: vec!["tui".to_string()],
        },
        Source {
            src: root.join("src"),
            prefix: Vec::new(),
        },
    ]
}

/// Walks one file's syntax tree and records every path into the crate.
struct Collector<'a> {
    file: &'a Path,
    /// Where this crate's `crate::` lands in the one tree ([`Source::prefix`]).
    prefix: &'a [String],
    /// The module the visitor is in: the file's module, plus any inline `mod x { }` around it.
    module: Vec<String>,
    /// Per scope (the file, then each inline module), the names the crate root is imported
    /// under there (`use crate as x;`, `extern crate self as x;`): a path starting with one
    /// of them is resolved as if it started with `crate`.
    aliases: Vec<Vec<String>>,
    out: &'a mut Vec<Import>,
}

impl Collector<'_> {
    /// `crate::a::b`, `super::super::a` or `self::a` resolved to a path from the crate root;
    /// `None` for other paths (`std::...`, a local name, a child module of this one).
    fn resolve(&self, segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        let rest = match first.as_str() {
            "crate" => return Some([self.prefix, &segments[1..]].concat()),
            // The other crates of the workspace, named from outside: the core's modules are
            // the tree's top-level modules, the TUI crate is `tui`.
            "versus_core" | "versus" => return Some(segments[1..].to_vec()),
            "versus_tui" => return Some([&["tui".to_string()], &segments[1..]].concat()),
            "super" | "self" => segments,
            alias
                if self
                    .aliases
                    .last()
                    .is_some_and(|a| a.iter().any(|n| n == alias)) =>
            {
                return Some([self.prefix, &segments[1..]].concat());
            }
            _ => return None,
        };
        let mut module = self.module.clone();
        let mut i = 0;
        while let Some(s) = rest.get(i) {
            match s.as_str() {
                "super" => {
                    module.pop()?;
                }
                "self" => {}
                _ => break,
            }
            i += 1;
        }
        module.extend(rest[i..].iter().cloned());
        Some(module)
    }

    fn record(&mut self, segments: &[String], line: usize) {
        let Some(path) = self.resolve(segments) else {
            return;
        };
        if path == self.prefix {
            return; // the root itself in an expression: only `use` can bring it in (below)
        }
        let (Some(from), Some(to)) = (self.module.first(), path.first()) else {
            return;
        };
        if from == to {
            return;
        }
        self.out.push(Import {
            file: self.file.to_path_buf(),
            line,
            from: from.clone(),
            to: to.clone(),
            path: path.join("::"),
        });
    }

    /// Every leaf of a `use` tree as a full path: `use crate::{a::b, c::{d, e}}` gives
    /// `crate::a::b`, `crate::c::d` and `crate::c::e`.
    fn use_tree(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            // The crate root imported whole, by glob or under another name (`use crate::*;`,
            // `use super::*;` from a top-level module, `use crate as x;`): reported as such,
            // since every path through it hides the module it reaches.
            syn::UseTree::Glob(g) if self.is_root(prefix) => {
                let shown = format!("{}::*", prefix.join("::"));
                self.root_import(shown, g.star_token.spans[0].start().line);
            }
            syn::UseTree::Rename(r)
                if self.is_root(&[prefix.clone(), vec![r.ident.to_string()]].concat()) =>
            {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                let shown = format!("{} as {}", path.join("::"), r.rename);
                self.root_import(shown, r.ident.span().start().line);
            }
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.record(&prefix.clone(), n.ident.span().start().line);
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.record(&prefix.clone(), r.ident.span().start().line);
                prefix.pop();
            }
            syn::UseTree::Glob(g) => {
                self.record(&prefix.clone(), g.star_token.spans[0].start().line);
            }
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(item, prefix);
                }
            }
        }
    }

    /// Whether `segments` (a `use` path from this module) names the crate root itself.
    fn is_root(&self, segments: &[String]) -> bool {
        !segments.is_empty() && self.resolve(segments).is_some_and(|p| p == self.prefix)
    }

    /// Records an import of the whole crate root, shown as written (`crate::*`, `crate as x`).
    /// The root of a crate that is one module of the tree (the TUI's) is that module itself:
    /// nothing is reached through it, the core is named as `versus_core::...` there.
    fn root_import(&mut self, shown: String, line: usize) {
        if !self.prefix.is_empty() {
            return;
        }
        let Some(from) = self.module.first() else {
            return;
        };
        self.out.push(Import {
            file: self.file.to_path_buf(),
            line,
            from: from.clone(),
            to: CRATE_ROOT.to_string(),
            path: shown,
        });
    }

    /// The names `items` import the crate root under (`use crate as x;`, `use super as x;`
    /// from a top-level module, `extern crate self as x;`). A `use` holds for its whole scope
    /// whatever its place in it, so they are collected before the scope is walked.
    fn root_aliases(&self, items: &[syn::Item]) -> Vec<String> {
        fn walk(
            c: &Collector<'_>,
            tree: &syn::UseTree,
            prefix: &mut Vec<String>,
            out: &mut Vec<String>,
        ) {
            match tree {
                syn::UseTree::Path(p) => {
                    prefix.push(p.ident.to_string());
                    walk(c, &p.tree, prefix, out);
                    prefix.pop();
                }
                syn::UseTree::Rename(r) => {
                    prefix.push(r.ident.to_string());
                    if c.is_root(prefix) {
                        out.push(r.rename.to_string());
                    }
                    prefix.pop();
                }
                syn::UseTree::Group(g) => {
                    for item in &g.items {
                        walk(c, item, prefix, out);
                    }
                }
                syn::UseTree::Name(_) | syn::UseTree::Glob(_) => {}
            }
        }
        let mut out = Vec::new();
        for item in items {
            match item {
                syn::Item::Use(u) => walk(self, &u.tree, &mut Vec::new(), &mut out),
                syn::Item::ExternCrate(e) if e.ident == "self" => {
                    if let Some((_, rename)) = &e.rename {
                        out.push(rename.to_string());
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// Paths inside a macro call are tokens, not syntax (`assert!(crate::tui::ok())`): find
    /// each run of `crate`/`super`/`self` `::` ident `::` ... among them.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.tokens(g.stream());
                i += 1;
                continue;
            }
            let starts = matches!(&trees[i], TokenTree::Ident(id)
                if id == "crate" || id == "super" || id == "self"
                    || self.aliases.last().is_some_and(|a| a.iter().any(|n| id == n)));
            let after_dollar =
                i > 0 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '$');
            if !starts
                || (after_dollar && !matches!(&trees[i], TokenTree::Ident(id) if id == "crate"))
            {
                i += 1;
                continue;
            }
            let line = trees[i].span().start().line;
            let mut segments = vec![trees[i].to_string()];
            let mut j = i + 1;
            while let (
                Some(TokenTree::Punct(a)),
                Some(TokenTree::Punct(b)),
                Some(TokenTree::Ident(id)),
            ) = (trees.get(j), trees.get(j + 1), trees.get(j + 2))
            {
                if a.as_char() != ':' || b.as_char() != ':' {
                    break;
                }
                segments.push(id.to_string());
                j += 3;
            }
            if segments.len() > 1 {
                self.record(&segments, line);
            }
            i = j;
        }
    }
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_file(&mut self, f: &'ast syn::File) {
        let aliases = self.root_aliases(&f.items);
        self.aliases.push(aliases);
        visit::visit_file(self, f);
        self.aliases.pop();
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let Some((_, items)) = &m.content else {
            return visit::visit_item_mod(self, m);
        };
        self.module.push(m.ident.to_string());
        let aliases = self.root_aliases(items);
        self.aliases.push(aliases);
        visit::visit_item_mod(self, m);
        self.aliases.pop();
        self.module.pop();
    }

    /// `extern crate self as x;` names the crate root too.
    fn visit_item_extern_crate(&mut self, e: &'ast syn::ItemExternCrate) {
        if e.ident == "self"
            && let Some((_, rename)) = &e.rename
        {
            self.root_import(
                format!("extern crate self as {rename}"),
                e.ident.span().start().line,
            );
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&u.tree, &mut Vec::new());
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = p.segments.first() {
            self.record(&segments, first.ident.span().start().line);
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        visit::visit_macro(self, m);
    }

    /// Doc comments and other attributes are not code: an intra-doc link to `crate::tui` makes
    /// no dependency.
    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}
}

/// Every path from a file of the crates into another top-level module.
fn imports(sources: &[Source]) -> Vec<Import> {
    let mut out = Vec::new();
    for source in sources {
        let mut files = Vec::new();
        rust_files(&source.src, &mut files);
        files.sort();
        for file in files {
            let module = module_of(&source.src, &source.prefix, &file);
            if module.is_empty() {
                continue; // the root lib.rs and main.rs only declare or re-export the modules
            }
            let text = std::fs::read_to_string(&file).unwrap();
            imports_in(&file, &source.prefix, module, &text, &mut out);
        }
    }
    out
}

/// Every path from the source `text` of `file`, module `module` of a crate whose `crate::` is
/// `prefix`, into another top-level module.
fn imports_in(
    file: &Path,
    prefix: &[String],
    module: Vec<String>,
    text: &str,
    out: &mut Vec<Import>,
) {
    let ast =
        syn::parse_file(text).unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
    Collector {
        file,
        prefix,
        module,
        aliases: Vec::new(),
        out,
    }
    .visit_file(&ast);
}

/// The top-level modules of the crates: a crate with a prefix is that one module, one without
/// has its folders and its files other than lib.rs and main.rs.
fn top_level_modules(sources: &[Source]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for source in sources {
        if let Some(first) = source.prefix.first() {
            names.push(first.clone());
            continue;
        }
        names.extend(
            std::fs::read_dir(&source.src)
                .unwrap()
                .flatten()
                .filter_map(|e| {
                    let path = e.path();
                    if path.is_dir() {
                        return Some(e.file_name().to_string_lossy().into_owned());
                    }
                    let stem = path.file_stem()?.to_string_lossy().into_owned();
                    (path.extension()? == "rs" && stem != "lib" && stem != "main").then_some(stem)
                }),
        );
    }
    names.sort();
    names.dedup();
    names
}

/// The table "Dependency direction, concretely" in a document, as (module, the crate modules
/// it may use). Only names in backticks count, and not those in parentheses, which explain
/// (`config` builds `WireConfig`s; `tui` never uses `headless`); `cli` says "anything public in
/// the library".
fn documented_dependencies(doc: &str) -> Vec<(String, Vec<String>)> {
    let table = doc
        .split("## Dependency direction, concretely")
        .nth(1)
        .expect("the dependency table in docs/ARCHITECTURE.md");
    let code = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    table
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let module = code(cells.get(1)?).into_iter().next()?;
            let mut depth = 0usize;
            let uses: String = cells
                .get(2)?
                .chars()
                .filter(|c| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth = depth.saturating_sub(1),
                        _ => return depth == 0,
                    }
                    false
                })
                .collect();
            Some((module, code(&uses)))
        })
        .collect()
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// Everything wrong between the sources under `src`, the dependency table in `doc` and
/// [`LAYERS`], one line each: a module without a row or without a layer, a row for a module
/// that does not exist, a row naming something that is not a module, a row that allows a
/// module of the same or a higher layer, a path the row does not allow (with file and line),
/// and an allowed module the code no longer uses (the table says exactly what is used).
fn check(src: &Path, doc: &str) -> Vec<String> {
    check_sources(
        &[Source {
            src: src.to_path_buf(),
            prefix: Vec::new(),
        }],
        doc,
    )
}

/// [`check`] over several crates seen as one tree ([`Source`]).
fn check_sources(sources: &[Source], doc: &str) -> Vec<String> {
    let modules = top_level_modules(sources);
    let table = documented_dependencies(doc);
    let mut problems = Vec::new();
    for module in &modules {
        if !table.iter().any(|(m, _)| m == module) {
            problems.push(format!("src/{module} has no row in the dependency table"));
        }
        if layer_of(module).is_none() {
            problems.push(format!(
                "src/{module} has no layer in LAYERS (tests/it/architecture.rs)"
            ));
        }
    }
    let found = imports(sources);
    for (module, allowed) in &table {
        if !modules.contains(module) {
            problems.push(format!(
                "the table has a row for {module}, which is not in src/"
            ));
            continue;
        }
        if module == "cli" {
            continue; // the binary: `crate::` there is the binary crate
        }
        for used in allowed {
            if !modules.contains(used) {
                problems.push(format!("{module}'s row names {used}, which is not in src/"));
            } else if layer_of(used) >= layer_of(module) {
                problems.push(format!(
                    "{module}'s row allows {used}, which is not in a lower layer"
                ));
            } else if !found.iter().any(|i| i.from == *module && i.to == *used) {
                problems.push(format!(
                    "{module}'s row names {used}, which {module} does not use"
                ));
            }
        }
        for import in found.iter().filter(|i| i.from == *module) {
            if !allowed.contains(&import.to) {
                problems.push(format!("{import}, which its row does not name"));
            }
        }
    }
    problems
}

/// The real tree against the real document.
#[test]
fn each_module_uses_exactly_what_the_architecture_table_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).unwrap();
    let problems = check_sources(&sources(), &doc);
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md and the code disagree:\n{}",
        problems.join("\n")
    );
}

/// The checker itself, on a small tree with every kind of upward path it must catch: without
/// this, a checker that finds nothing would pass the test above forever.
#[test]
fn the_checker_reports_every_kind_of_upward_path() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let write = |rel: &str, text: &str| {
        let path = src.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod exec;\npub mod model;\npub mod tui;\n");
    write("tui/mod.rs", "pub fn draw() {}\npub struct Screen;\n");
    write("model.rs", "pub struct Message;\n");
    write(
        "exec/mod.rs",
        "mod deep;\n\
         use crate::tui::Screen;\n\
         use crate::{model::Message, tui::draw};\n\
         pub fn run(_: crate::tui::Screen) {\n\
         \x20   crate::tui::draw();\n\
         \x20   assert!(crate::tui::draw() == ());\n\
         }\n\
         pub use crate::tui as ui;\n",
    );
    write(
        "exec/deep/mod.rs",
        "use super::super::tui::Screen;\nmod inner { use super::super::super::model::*; }\n\
         mod all { use crate::*; }\nmod named { use crate as root; fn f() { root::tui::draw(); } }\n",
    );
    write("stray.rs", "");
    let doc = "## Dependency direction, concretely\n\n\
               | Module | May use |\n|---|---|\n\
               | `exec` | nothing in the crate |\n\
               | `model` | `exec` |\n\
               | `tui` | `model`, `headless` (never `cli`) |\n";
    let problems = check(&src, doc);
    let report = problems.join("\n");
    let expect = [
        // an upward `use`
        "exec/mod.rs:2: exec uses tui (crate::tui::Screen)",
        // both leaves of a grouped import
        "exec/mod.rs:3: exec uses model (crate::model::Message)",
        "exec/mod.rs:3: exec uses tui (crate::tui::draw)",
        // inline paths: a type, an expression, a macro's tokens
        "exec/mod.rs:4: exec uses tui (crate::tui::Screen)",
        "exec/mod.rs:5: exec uses tui (crate::tui::draw)",
        "exec/mod.rs:6: exec uses tui (crate::tui::draw)",
        // a re-export
        "exec/mod.rs:8: exec uses tui (crate::tui)",
        // `super` climbing out of the module, from a file and from an inline module
        "deep/mod.rs:1: exec uses tui (crate::tui::Screen)",
        "deep/mod.rs:2: exec uses model (crate::model)",
        // the crate root imported whole, and a path through its other name
        "deep/mod.rs:3: exec uses the crate root (`crate::*`",
        "deep/mod.rs:4: exec uses the crate root (`crate as root`",
        "deep/mod.rs:4: exec uses tui (crate::tui::draw)",
        // the table itself
        "src/stray has no row in the dependency table",
        "src/stray has no layer in LAYERS",
        "model's row allows exec, which is not in a lower layer",
        "tui's row names model, which tui does not use",
        "tui's row names headless, which is not in src/",
    ];
    assert!(
        !report.contains("names cli"),
        "parentheses explain: {report}"
    );
    for line in expect {
        assert!(report.contains(line), "missing {line:?} in:\n{report}");
    }
    // Paths that stay inside a module, or leave the crate, are not imports of another module.
    write(
        "tui/mod.rs",
        "use self::inner::X;\nuse std::fmt;\nmod inner { pub struct X; use super::draw; }\n\
         pub fn draw() { crate::tui::draw(); }\n",
    );
    let report = check(&src, doc).join("\n");
    assert!(!report.contains("tui/mod.rs"), "{report}");
}

/// What the checker finds in `text` as the source of `src/exec/mod.rs`, one line each.
fn found_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    imports_in(
        Path::new("src/exec/mod.rs"),
        &[],
        vec!["exec".into()],
        text,
        &mut out,
    );
    out.iter().map(ToString::to_string).collect()
}

/// The TUI crate's own `crate::` is the `tui` module, and the core's modules are named from it
/// as `versus_core::...`: both resolve into the one tree, so its row is checked like any other.
/// Its own root imported whole is only the `tui` module (its tests do `use super::*;`).
#[test]
fn the_tui_crate_is_the_tui_module_of_the_tree() {
    let mut out = Vec::new();
    imports_in(
        Path::new("crates/tui/src/review/mod.rs"),
        &["tui".to_string()],
        vec!["tui".into(), "review".into()],
        "use crate::state::App;\n\
         use versus_core::review::BlindNames;\n\
         fn f() { super::draw(); versus_core::runner::fan_out(); }\n\
         mod m { use crate as root; use super::*; fn g() { root::state::f(); } }\n",
        &mut out,
    );
    let found: Vec<String> = out.iter().map(ToString::to_string).collect();
    assert_eq!(
        found,
        [
            "crates/tui/src/review/mod.rs:2: tui uses review (crate::review::BlindNames)",
            "crates/tui/src/review/mod.rs:3: tui uses runner (crate::runner::fan_out)",
        ],
        "{found:?}"
    );
}

#[test]
fn a_glob_of_the_crate_root_is_caught() {
    assert_eq!(
        found_in("use crate::*;\nfn f() { tui::draw(); }\n"),
        [
            "src/exec/mod.rs:1: exec uses the crate root (`crate::*`: name the modules it needs instead)"
        ]
    );
    // `super` from a top-level module is the root too; from below it, it is not.
    assert_eq!(
        found_in("use super::*;\n"),
        [
            "src/exec/mod.rs:1: exec uses the crate root (`super::*`: name the modules it needs instead)"
        ]
    );
    assert!(found_in("mod tests { use super::*; }\n").is_empty());
}

#[test]
fn the_crate_root_under_another_name_is_caught_and_seen_through() {
    let found = found_in(
        "use crate as x;\n\
         fn f() -> x::model::Message {\n\
         \x20   x::tui::draw();\n\
         \x20   assert!(x::tui::ok());\n\
         }\n\
         use x::apply::Plan;\n",
    );
    assert_eq!(
        found,
        [
            "src/exec/mod.rs:1: exec uses the crate root (`crate as x`: name the modules it needs instead)",
            "src/exec/mod.rs:2: exec uses model (crate::model::Message)",
            "src/exec/mod.rs:3: exec uses tui (crate::tui::draw)",
            "src/exec/mod.rs:4: exec uses tui (crate::tui::ok)",
            "src/exec/mod.rs:6: exec uses apply (crate::apply::Plan)",
        ]
    );
    // In a group, from `super`, and by `extern crate self`.
    let found = found_in(
        "use {std::fmt, super as up};\nextern crate self as me;\n\
         fn f() { up::tui::draw(); me::model::new(); }\n",
    );
    assert_eq!(
        found,
        [
            "src/exec/mod.rs:1: exec uses the crate root (`super as up`: name the modules it needs instead)",
            "src/exec/mod.rs:2: exec uses the crate root (`extern crate self as me`: name the modules it needs instead)",
            "src/exec/mod.rs:3: exec uses tui (crate::tui::draw)",
            "src/exec/mod.rs:3: exec uses model (crate::model::new)",
        ]
    );
    // An alias holds in its own scope only: a child module's `x` is its own.
    let found = found_in("use crate as x;\nmod inner { fn f() { x::tui::draw(); } }\n");
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn inline_paths_in_expressions_patterns_and_types_are_caught() {
    let found = found_in(
        "fn f(v: Vec<crate::model::Message>) -> usize {\n\
         \x20   let n = crate::tui::WIDTH + <crate::apply::Plan as Default>::default().len();\n\
         \x20   match v.first() { Some(crate::review::Row { .. }) => n, _ => crate::stats::zero() }\n\
         }\n",
    );
    let modules: Vec<&str> = found
        .iter()
        .map(|l| l.split(" uses ").nth(1).unwrap().split(' ').next().unwrap())
        .collect();
    assert_eq!(
        modules,
        ["model", "tui", "apply", "review", "stats"],
        "{found:?}"
    );
}

/// Keeps the old guarantee that no library code reaches for the binary's error and argument
/// crates.
#[test]
fn the_library_does_not_depend_on_the_binary_edge() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for source in sources() {
        rust_files(&source.src, &mut files);
    }
    for f in files {
        if f.starts_with(src.join("cli")) || f.ends_with("main.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(
            !text.contains("anyhow::"),
            "{}: anyhow belongs to the binary edge",
            f.display()
        );
        assert!(
            !text.contains("clap::"),
            "{}: clap belongs to the binary edge",
            f.display()
        );
    }
}

/// The front ends reach the turn only through the engine: neither the interface nor
/// `versus run` names the runner (fan-out, workspaces of a turn) or the agent loop, whatever
/// the table says (a row loosened together with the code would pass the test above). What
/// they need of either, the engine re-exports (`engine::RunOptions`, `engine::runnable`...).
#[test]
fn front_ends_reach_the_turn_only_through_the_engine() {
    let found = imports(&sources());
    let reaching: Vec<String> = found
        .iter()
        .filter(|i| ["tui", "headless"].contains(&i.from.as_str()))
        .filter(|i| ["runner", "agent"].contains(&i.to.as_str()))
        .map(|i| i.to_string())
        .collect();
    assert!(
        reaching.is_empty(),
        "a front end names the turn's machinery directly:\n{}",
        reaching.join("\n")
    );
}
