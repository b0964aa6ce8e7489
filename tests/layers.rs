//! The house rules, checked from the source itself so that a clone reproduces CI: each
//! stage (a top-level module of `src/`) imports only the stages on lower lines of
//! `.layers`, peers never import each other (which also rules out cycles), every stage
//! is listed, and no file or function outgrows its size limit (test code not counted).
//! `../shared/tools/layers.py` checks the same from outside.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// Non-blank, non-comment lines of a file's code outside its tests.
const MAX_FILE: usize = 600;
/// The same, of one function.
const MAX_FN: usize = 60;

/// `.layers`: each stage's level, lowest first; stages on one line share a level.
fn levels(text: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    let lines = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter(|l| !l.trim().is_empty());
    for (level, line) in lines.enumerate() {
        for stage in line.split_whitespace() {
            out.insert(stage.to_string(), level);
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The stage a file belongs to: its first folder, or its own name at the top (the
/// crate roots `lib.rs` and `main.rs` belong to none).
fn stage_of(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    match first.strip_suffix(".rs") {
        Some("lib" | "main") => None,
        Some(stem) => Some(stem.to_string()),
        None => Some(first.to_string()),
    }
}

fn is_test_code(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

/// What one file's code outside its tests says: the stages it names, its functions'
/// line ranges, and the line ranges of its test items.
#[derive(Default)]
struct Reading {
    /// `crate::x` in the library, `crate::x` or `sshbench::x` in the binary.
    names: BTreeSet<String>,
    functions: Vec<(String, usize, usize)>,
    tests: Vec<(usize, usize)>,
    depth: usize,
}

impl Reading {
    /// Stage names after `crate::` (or `sshbench::`) anywhere in a token stream: macro
    /// bodies are tokens to syn, and `format!("{}", crate::x::y())` names a stage too.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            match t {
                TokenTree::Group(g) => self.scan_tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "sshbench" => {
                    if let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b))) =
                        (trees.get(i + 1), trees.get(i + 2))
                        && a.as_char() == ':'
                        && b.as_char() == ':'
                    {
                        match trees.get(i + 3) {
                            Some(TokenTree::Ident(name)) => {
                                self.names.insert(name.to_string());
                            }
                            Some(TokenTree::Group(g)) => self.token_group(g.stream()),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// What follows `use crate::`: a name, a path, or a group of them.
    fn use_heads(&mut self, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                self.names.insert(p.ident.to_string());
            }
            syn::UseTree::Name(n) => {
                self.names.insert(n.ident.to_string());
            }
            syn::UseTree::Rename(r) => {
                self.names.insert(r.ident.to_string());
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_heads(t)),
            syn::UseTree::Glob(_) => {}
        }
    }

    /// `crate::{a, b::c}` inside a macro's tokens: each head of the group names a stage.
    fn token_group(&mut self, tokens: TokenStream) {
        let mut head = true;
        for t in tokens {
            match t {
                TokenTree::Ident(id) if head => {
                    self.names.insert(id.to_string());
                    head = false;
                }
                TokenTree::Punct(p) if p.as_char() == ',' => head = true,
                _ => head = false,
            }
        }
    }

    fn function(&mut self, name: String, span: proc_macro2::Span) {
        if self.depth == 0 {
            self.functions
                .push((name, span.start().line, span.end().line));
        }
    }
}

impl<'a> Visit<'a> for Reading {
    fn visit_item(&mut self, item: &'a syn::Item) {
        if is_test_code(item_attrs(item)) {
            let span = syn::spanned::Spanned::span(item);
            self.tests.push((span.start().line, span.end().line));
            return;
        }
        syn::visit::visit_item(self, item);
    }

    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        self.function(f.sig.ident.to_string(), syn::spanned::Spanned::span(f));
        self.depth += 1;
        syn::visit::visit_item_fn(self, f);
        self.depth -= 1;
    }

    fn visit_impl_item_fn(&mut self, f: &'a syn::ImplItemFn) {
        if is_test_code(&f.attrs) {
            let span = syn::spanned::Spanned::span(f);
            self.tests.push((span.start().line, span.end().line));
            return;
        }
        self.function(f.sig.ident.to_string(), syn::spanned::Spanned::span(f));
        self.depth += 1;
        syn::visit::visit_impl_item_fn(self, f);
        self.depth -= 1;
    }

    fn visit_trait_item_fn(&mut self, f: &'a syn::TraitItemFn) {
        if f.default.is_some() {
            self.function(f.sig.ident.to_string(), syn::spanned::Spanned::span(f));
        }
        self.depth += 1;
        syn::visit::visit_trait_item_fn(self, f);
        self.depth -= 1;
    }

    fn visit_item_use(&mut self, u: &'a syn::ItemUse) {
        if let syn::UseTree::Path(p) = &u.tree
            && (p.ident == "crate" || p.ident == "sshbench")
        {
            self.use_heads(&p.tree);
        }
    }

    fn visit_path(&mut self, p: &'a syn::Path) {
        let mut segs = p.segments.iter().map(|s| s.ident.to_string());
        if let (Some(first), Some(second)) = (segs.next(), segs.next())
            && (first == "crate" || first == "sshbench")
        {
            self.names.insert(second);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'a syn::Macro) {
        self.scan_tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }
}

/// The lines that hold code: every token's first and last line, doc comments left out
/// (syn sees them as `#[doc]` attributes, layers.py as comments).
fn code_lines(tokens: TokenStream, out: &mut BTreeSet<usize>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        if let (TokenTree::Punct(p), Some(TokenTree::Group(g))) = (&trees[i], trees.get(i + 1))
            && p.as_char() == '#'
            && g.stream()
                .into_iter()
                .next()
                .is_some_and(|t| matches!(&t, TokenTree::Ident(id) if id == "doc"))
        {
            i += 2;
            continue;
        }
        // `#![doc]` at a file's top.
        if let (TokenTree::Punct(p), Some(TokenTree::Punct(bang)), Some(TokenTree::Group(g))) =
            (&trees[i], trees.get(i + 1), trees.get(i + 2))
            && p.as_char() == '#'
            && bang.as_char() == '!'
            && g.stream()
                .into_iter()
                .next()
                .is_some_and(|t| matches!(&t, TokenTree::Ident(id) if id == "doc"))
        {
            i += 3;
            continue;
        }
        let span = trees[i].span();
        out.insert(span.start().line);
        out.insert(span.end().line);
        if let TokenTree::Group(g) = &trees[i] {
            code_lines(g.stream(), out);
        }
        i += 1;
    }
}

#[test]
fn the_stages_import_only_lower_layers_and_nothing_outgrows_its_limits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let levels = levels(&std::fs::read_to_string(root.join(".layers")).unwrap());
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut findings = Vec::new();
    let mut stages = BTreeSet::new();
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for path in &files {
        let rel = path.strip_prefix(&src).unwrap();
        let stage = stage_of(rel);
        stages.extend(stage.clone());
        let text = std::fs::read_to_string(path).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", rel.display()));
        let mut reading = Reading::default();
        reading.visit_file(&file);
        let in_tests = |line: &usize| reading.tests.iter().any(|&(a, b)| (a..=b).contains(line));
        let mut lines = BTreeSet::new();
        code_lines(text.parse().unwrap(), &mut lines);
        lines.retain(|l| !in_tests(l));
        if lines.len() > MAX_FILE {
            findings.push(format!(
                "file {}: {} lines of non-test code (> {MAX_FILE})",
                rel.display(),
                lines.len()
            ));
        }
        for (name, start, end) in &reading.functions {
            let n = lines.range(start..=end).count();
            if n > MAX_FN {
                findings.push(format!(
                    "function {}:{start} fn {name}: {n} lines (> {MAX_FN})",
                    rel.display()
                ));
            }
        }
        let Some(stage) = stage else { continue };
        for name in reading.names {
            if name != stage && levels.contains_key(&name) {
                edges
                    .entry((stage.clone(), name))
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    for s in stages.iter().filter(|s| !levels.contains_key(*s)) {
        findings.push(format!("stage `{s}` is not in .layers"));
    }
    for ((from, to), files) in &edges {
        let (Some(a), Some(b)) = (levels.get(from), levels.get(to)) else {
            continue;
        };
        if b >= a {
            let kind = if a == b { "peer" } else { "upward" };
            let files: Vec<_> = files.iter().cloned().collect();
            findings.push(format!(
                "{kind} import {from} -> {to} (in {})",
                files.join(", ")
            ));
        }
    }
    assert!(findings.is_empty(), "\n{}", findings.join("\n"));
    // The walk itself must have seen the crate: an empty reading would pass anything.
    assert!(
        stages.len() >= 10 && edges.len() >= 20,
        "{stages:?} {}",
        edges.len()
    );
}

#[test]
fn an_upward_import_is_read_in_a_use_a_path_a_group_and_a_macro() {
    let file = syn::parse_file(
        "use crate::{views, store::Store};
         fn f() { crate::app::run(); println!(\"{}\", crate::cli::x()); }
         #[cfg(test)] mod tests { use crate::main_only; }",
    )
    .unwrap();
    let mut r = Reading::default();
    r.visit_file(&file);
    let names: Vec<_> = r.names.iter().map(String::as_str).collect();
    assert_eq!(names, ["app", "cli", "store", "views"]);
    assert_eq!(r.tests.len(), 1);
    assert_eq!(r.functions.len(), 1);
}
