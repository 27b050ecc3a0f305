//! Guards the shape of the code base, in each crate of the workspace (src/ and crates/core/src/),
//! what the compiler does not check: no import cycle between the top-level modules, nor
//! between the sibling modules of one module folder (an edge into a sibling folder's inner file
//! is an edge into that folder, unless the file is a leaf's); leaves (`LEAVES`) that import only
//! leaves; no circle of files that spans two
//! folders, following every `crate::`, `super::`, `self::`, relative child and full path (a
//! folder's `mod.rs`, or `x.rs` beside `x/`, belongs to that folder); no function over 80 lines outside
//! test code; no production file over 800 lines (test code apart); no long flag declared by two
//! clap structs; and a README of at most 250 lines whose relative links (like those of
//! docs/*.md) all resolve, anchors included.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::visit::{self, Visit};

const MAX_FN_LINES: usize = 80;
const MAX_README_LINES: usize = 250;
const MAX_FILE_LINES: usize = 800;

/// The core crate's leaves (crates/core): folders (ending in `/`) and files that import nothing
/// of the crate but other leaves, so that no loop can run through them. The report's model is
/// one (plain data that every analysis and view reads); so are `source/` (`--source`, whose
/// `CodeLocation` a finding carries) and `tags/` (the comments' reading, which imports only the
/// model's tags). That the core does no I/O the compiler checks: its crate depends on nothing
/// that does (`cargo tree -p pgcost-core`).
const LEAVES: &[&str] = &["src/report/model/", "src/source/", "src/tags/"];

/// One place where top-level module `from` refers to top-level module `to`.
struct Edge {
    from: String,
    to: String,
    file: String,
    line: usize,
    test: bool,
}

impl Edge {
    fn site(&self) -> String {
        let tag = if self.test { " (test code)" } else { "" };
        format!("{}:{}{tag}", self.file, self.line)
    }
}

/// A function outside test code, measured from its `fn` keyword to its closing brace.
struct Function {
    site: String,
    name: String,
    lines: usize,
}

/// A file's production lines: all its lines but those of items under a test attribute.
struct FileSize {
    file: String,
    lines: usize,
}

/// A long flag declared by a field of a clap struct (`#[derive(Args)]` or `#[derive(Parser)]`).
struct Flag {
    long: String,
    owner: String,
    site: String,
}

#[derive(Default)]
struct Analysis {
    modules: BTreeSet<String>,
    edges: Vec<Edge>,
    /// Every module below the top level (`cost::report`), and the edges between siblings of
    /// one folder outside test code (`cost::report` -> `cost::findings`).
    nested: BTreeSet<String>,
    sibling_edges: Vec<Edge>,
    /// Every production file, with its folder (`src/cost/report/` for `src/cost/report.rs`
    /// beside `src/cost/report/`, and for `src/cost/report/mod.rs`), and the edges between
    /// files that production code makes (`src/cost/findings/mod.rs` ->
    /// `src/cost/report/model.rs`), from every `crate::`, `super::`, `self::` and full path.
    folders: BTreeMap<String, String>,
    file_edges: Vec<Edge>,
    /// The leaves marked, and the modules (`cost::report::model::notes`) their files declare.
    leaves: Vec<String>,
    leaf_modules: BTreeSet<String>,
    functions: Vec<Function>,
    files: Vec<FileSize>,
    flags: Vec<Flag>,
}

/// Parses every file of `root/src` and collects module edges and function lengths.
///
/// Test code is what sits under `#[test]` / `#[cfg(test)]` (or `#[cfg(all(test, ..))]`), and
/// every file of a module declared under such an attribute (`#[cfg(test)] mod tests;`): that
/// is found from the parent's declaration, not from the file's name. `leaves` are as [`LEAVES`].
fn analyze(root: &Path, leaves: &[&str], top: &[&str]) -> Analysis {
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut analysis = Analysis {
        leaves: leaves.iter().map(|l| l.to_string()).collect(),
        ..Analysis::default()
    };
    let mut walked = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let top: Vec<String> = top.iter().map(|t| t.to_string()).collect();
        let scope = [top.clone(), module_path(rel)].concat();
        let mut visitor = FileVisitor::new(format!("src/{}", rel.display()), scope, top);
        visitor.visit_file(&ast);
        analysis.modules.extend(visitor.scope.first().cloned());
        visitor.lines = text.lines().count();
        walked.push(visitor);
    }
    let test_mods: Vec<_> = walked.iter().flat_map(|v| v.test_mods.clone()).collect();
    let owners = module_files(&walked);
    let in_leaf = |file: &String| leaves.iter().any(|l| file.starts_with(l));
    let leaf_modules = owners.iter().filter(|(_, file)| in_leaf(file));
    analysis.leaf_modules = leaf_modules.map(|(module, _)| module.clone()).collect();
    for v in &mut walked {
        let scope = v.scope.len();
        let relative = std::mem::take(&mut v.relative);
        let child = |p: &[String]| owners.contains_key(&p[..=scope].join("::"));
        (v.refs).extend(relative.into_iter().filter(|(p, _, _)| child(p)));
    }
    for v in walked
        .iter()
        .filter(|v| !test_mods.iter().any(|m| v.scope.starts_with(m)))
    {
        let folder = folder_of(&src, &v.file);
        analysis.folders.insert(v.file.clone(), folder);
        analysis.file_edges.extend(file_edges(v, &owners));
    }
    for v in &walked {
        let paths = v.inline_mods.iter().chain([&v.scope]);
        let nested = paths.filter(|p| p.len() > 1).map(|p| p.join("::"));
        analysis.nested.extend(nested);
    }
    for v in walked {
        let test_file = test_mods.iter().any(|m| v.scope.starts_with(m));
        if !test_file {
            analysis.sibling_edges.extend(sibling_edges(
                &v,
                &analysis.nested,
                &analysis.leaf_modules,
            ));
            let lines = v.lines - v.test_lines;
            let file = v.file.clone();
            analysis.files.push(FileSize { file, lines });
            analysis.flags.extend(v.flags);
        }
        // main.rs and lib.rs (scope empty) are crate roots: their functions count, not their paths.
        if let Some(from) = v.scope.first() {
            for (to, line, test) in &v.refs {
                let Some(to) = to.first() else { continue };
                if to != from && analysis.modules.contains(to) {
                    let (from, to, file) = (from.clone(), to.clone(), v.file.clone());
                    let (line, test) = (*line, *test || test_file);
                    analysis.edges.push(Edge {
                        from,
                        to,
                        file,
                        line,
                        test,
                    });
                }
            }
        }
        if !test_file {
            analysis.functions.extend(v.functions);
        }
    }
    analysis
}

/// The edges of one file's production references between two siblings of one folder. The
/// module referred to is the deepest module its path names (`cost::report::model`); the edge
/// joins the two modules' ancestors just below their common one (`cost::delta` ->
/// `cost::report` for `cost::delta` naming `cost::report::model::invalid`, `cost::findings`
/// -> `cost::report` for a file of `cost/findings/` naming it). So each folder's files form
/// no cycle, nor does a loop run through a sibling folder's inner file; an edge into a leaf's
/// module is none, as a leaf leads nowhere back.
fn sibling_edges(
    v: &FileVisitor,
    nested: &BTreeSet<String>,
    leaves: &BTreeSet<String>,
) -> Vec<Edge> {
    let mut edges = Vec::new();
    for (to, line, test) in v.refs.iter().filter(|(_, _, test)| !test) {
        let from = &v.scope;
        let Some(k) = (2..=to.len())
            .rev()
            .find(|&k| nested.contains(&to[..k].join("::")))
        else {
            continue; // a top-level module (checked apart), or no module of the crate
        };
        let common = from
            .iter()
            .zip(&to[..k])
            .take_while(|(a, b)| a == b)
            .count();
        if common == 0
            || common == from.len()
            || common == k
            || leaves.contains(&to[..k].join("::"))
        {
            continue; // top level, an ancestor, a descendant, or a leaf
        }
        let (from, to) = (from[..=common].join("::"), to[..=common].join("::"));
        let (file, line, test) = (v.file.clone(), *line, *test);
        edges.push(Edge {
            from,
            to,
            file,
            line,
            test,
        });
    }
    edges
}

/// Each leaf's production references that land outside the leaves, and each leaf marked that
/// holds no file.
fn leaf_report(a: &Analysis) -> (String, Vec<String>) {
    let in_leaf = |file: &str| a.leaves.iter().any(|l| file.starts_with(l.as_str()));
    let mut problems: Vec<String> = (a.leaves.iter())
        .filter(|l| !a.folders.keys().any(|f| f.starts_with(l.as_str())))
        .map(|l| format!("{l} is marked a leaf, but holds no production file"))
        .collect();
    let leaf_files = a.folders.keys().filter(|f| in_leaf(f)).count();
    for e in a
        .file_edges
        .iter()
        .filter(|e| in_leaf(&e.from) && !in_leaf(&e.to))
    {
        problems.push(format!("{} imports {}, which is no leaf", e.site(), e.to));
    }
    let summary = format!(
        "checked {} leaves ({leaf_files} files), {} imports out of them",
        a.leaves.len(),
        problems.len()
    );
    (summary, problems)
}

/// Module path (`cost::report`, inline modules included) -> the file that declares it.
fn module_files(walked: &[FileVisitor]) -> BTreeMap<String, String> {
    let mut owners = BTreeMap::new();
    for v in walked {
        for module in v.inline_mods.iter().chain([&v.scope]) {
            owners.insert(module.join("::"), v.file.clone());
        }
    }
    owners
}

/// The edges from one file to the files its production paths land in: the file of the
/// deepest module each path names. The crate root is no target.
fn file_edges(v: &FileVisitor, owners: &BTreeMap<String, String>) -> Vec<Edge> {
    let mut edges = Vec::new();
    for (to, line, _) in v.refs.iter().filter(|(_, _, test)| !test) {
        let Some(target) = (1..=to.len())
            .rev()
            .find_map(|k| owners.get(&to[..k].join("::")))
        else {
            continue;
        };
        if *target != v.file {
            edges.push(Edge {
                from: v.file.clone(),
                to: target.clone(),
                file: v.file.clone(),
                line: *line,
                test: false,
            });
        }
    }
    edges
}

/// The folder a file belongs to: its own folder for `x/mod.rs` and for `x.rs` beside `x/`,
/// else the folder it sits in.
fn folder_of(src: &Path, file: &str) -> String {
    let rel = Path::new(file).strip_prefix("src").unwrap();
    let own = match rel.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs") => rel.parent().map(Path::to_path_buf),
        _ => Some(rel.with_extension("")).filter(|dir| src.join(dir).is_dir()),
    };
    let folder = own.unwrap_or_else(|| rel.parent().unwrap().to_path_buf());
    format!("src/{}", folder.join("").display())
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `a.rs` and `a/mod.rs` -> [a]; `a/x.rs` -> [a, x]; `lib.rs` and `main.rs` -> [].
fn module_path(rel: &Path) -> Vec<String> {
    let mut path: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    if path.len() > 1 && path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    if path == ["lib"] || path == ["main"] {
        path.clear();
    }
    path
}

fn line(span: Span) -> usize {
    span.start().line
}

/// `#[test]`, `#[tokio::test]`, `#[cfg(test)]`, `#[cfg(all(test, ...))]` and
/// `#[cfg(any(test, ...))]` (the core's tests, shared as fixtures with the binary's tests).
fn is_test_attr(attr: &syn::Attribute) -> bool {
    let path = attr.path();
    if path.segments.last().is_some_and(|s| s.ident == "test") {
        return true;
    }
    let syn::Meta::List(list) = &attr.meta else {
        return false;
    };
    let cfg = list.tokens.to_string().replace(' ', "");
    path.is_ident("cfg")
        && (cfg == "test" || cfg.starts_with("all(test,") || cfg.starts_with("any(test,"))
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => &[],
    }
}

struct FileVisitor {
    file: String,
    /// The module being walked: the file's own path, plus any inline `mod x { .. }` entered.
    scope: Vec<String>,
    /// The module path `crate` names: empty, or the module the crate is analysed as.
    root: Vec<String>,
    /// How many enclosing items are test code.
    in_test: usize,
    /// The type or trait whose methods are being walked, to name them `Type::method`.
    owner: Option<String>,
    /// (module path referred to, from the crate root; line; from test code).
    refs: Vec<(Vec<String>, usize, bool)>,
    /// Paths that start with a plain name, as (scope + path; line; from test code): those
    /// whose name is a module declared in the scope join `refs` once all files are read.
    relative: Vec<(Vec<String>, usize, bool)>,
    functions: Vec<Function>,
    /// Module paths declared as `mod x;` inside test code: their files are test code.
    test_mods: Vec<Vec<String>>,
    /// Module paths of inline `mod x { .. }` outside test code.
    inline_mods: Vec<Vec<String>>,
    /// The file's lines, and those of its items under a test attribute (outermost only).
    lines: usize,
    test_lines: usize,
    flags: Vec<Flag>,
}

impl FileVisitor {
    fn new(file: String, scope: Vec<String>, root: Vec<String>) -> Self {
        let (in_test, owner) = (0, None);
        let (refs, functions, test_mods) = (Vec::new(), Vec::new(), Vec::new());
        let relative = Vec::new();
        let (inline_mods, flags) = (Vec::new(), Vec::new());
        Self {
            file,
            scope,
            root,
            in_test,
            owner,
            refs,
            relative,
            functions,
            test_mods,
            inline_mods,
            lines: 0,
            test_lines: 0,
            flags,
        }
    }

    /// Walks an item with these attributes, as test code if one of them says so.
    fn enter(&mut self, attrs: &[syn::Attribute], walk: impl FnOnce(&mut Self)) {
        let test = usize::from(attrs.iter().any(is_test_attr));
        self.in_test += test;
        walk(self);
        self.in_test -= test;
    }

    /// Records a path that starts `crate`, `self` or `super` by the path it lands on.
    fn refer(&mut self, segments: &[String], line: usize) {
        let mut scope = self.scope.clone();
        let mut rest = segments;
        match segments.first().map(String::as_str) {
            Some("crate") => {
                scope.clone_from(&self.root);
                rest = &rest[1..];
            }
            Some("self" | "super") => {
                while let Some(first) = rest.first().filter(|s| *s == "self" || *s == "super") {
                    if first == "super" && scope.pop().is_none() {
                        return;
                    }
                    rest = &rest[1..];
                }
            }
            Some(_) => {
                // `child::item`: kept as (scope + path), a reference if `child` turns out to
                // be a module declared here, once every file is read.
                let mut path = self.scope.clone();
                path.extend(segments.iter().cloned());
                self.relative.push((path, line, self.in_test > 0));
                return;
            }
            None => return,
        }
        scope.extend(rest.iter().cloned());
        if scope.len() > self.root.len() {
            self.refs.push((scope, line, self.in_test > 0));
        }
    }

    /// Finds `crate :: a :: b` and `super :: ..` in a macro body, which syn leaves unparsed.
    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let is_colon = |t: &TokenTree| matches!(t, TokenTree::Punct(p) if p.as_char() == ':');
        for (i, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Group(group) => self.scan_tokens(group.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    if i > 0 && is_colon(&tokens[i - 1]) {
                        continue; // inside a chain already read
                    }
                    let mut segments = vec![id.to_string()];
                    let mut rest = &tokens[i + 1..];
                    while let [a, b, TokenTree::Ident(next), ..] = rest {
                        if !(is_colon(a) && is_colon(b)) {
                            break;
                        }
                        segments.push(next.to_string());
                        rest = &rest[3..];
                    }
                    self.refer(&segments, line(id.span()));
                }
                _ => {}
            }
        }
    }

    fn function(&mut self, sig: &syn::Signature, body: &syn::Block, walk: impl FnOnce(&mut Self)) {
        if self.in_test == 0 {
            let start = line(sig.fn_token.span);
            let lines = line(body.brace_token.span.close()) - start + 1;
            let name = match &self.owner {
                Some(owner) => format!("{owner}::{}", sig.ident),
                None => sig.ident.to_string(),
            };
            let site = format!("{}:{start}", self.file);
            self.functions.push(Function { site, name, lines });
        }
        let owner = self.owner.take(); // a fn nested in a method is no method
        walk(self);
        self.owner = owner;
    }

    fn with_owner(&mut self, owner: Option<String>, walk: impl FnOnce(&mut Self)) {
        let outer = std::mem::replace(&mut self.owner, owner);
        walk(self);
        self.owner = outer;
    }
}

/// Every path a `use` tree names, with the line of its last segment.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, usize)>) {
    let leaf = |prefix: &[String], ident: &syn::Ident| {
        let path = prefix.iter().cloned().chain([ident.to_string()]).collect();
        (path, line(ident.span()))
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => out.push(leaf(prefix, &n.ident)),
        syn::UseTree::Rename(r) => out.push(leaf(prefix, &r.ident)),
        syn::UseTree::Glob(g) => out.push((prefix.clone(), line(g.star_token.span))),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_paths(t, prefix, out)),
    }
}

/// Whether these attributes hold `#[name(word)]`, such as `#[command(flatten)]`.
fn has_attr_word(attrs: &[syn::Attribute], names: &[&str], word: &str) -> bool {
    attrs.iter().any(|a| {
        let syn::Meta::List(list) = &a.meta else {
            return false;
        };
        let named = names.iter().any(|n| list.path.is_ident(n));
        named
            && list
                .tokens
                .clone()
                .into_iter()
                .any(|t| t.to_string() == word)
    })
}

/// The long flag a field's `#[arg(..)]` (or `#[clap(..)]`) declares: `long = "x"`, or the
/// field's name in kebab-case for a bare `long`.
fn long_flag(field: &syn::Field) -> Option<String> {
    for attr in &field.attrs {
        let syn::Meta::List(list) = &attr.meta else {
            continue;
        };
        if !(list.path.is_ident("arg") || list.path.is_ident("clap")) {
            continue;
        }
        let tokens: Vec<TokenTree> = list.tokens.clone().into_iter().collect();
        for part in tokens.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
            match part {
                [TokenTree::Ident(id)] if id == "long" => {
                    let name = field.ident.as_ref()?.to_string();
                    return Some(name.trim_start_matches("r#").replace('_', "-"));
                }
                [
                    TokenTree::Ident(id),
                    TokenTree::Punct(eq),
                    TokenTree::Literal(value),
                ] if id == "long" && eq.as_char() == '=' => {
                    return Some(value.to_string().trim_matches('"').to_string());
                }
                _ => {}
            }
        }
    }
    None
}

impl<'ast> Visit<'ast> for FileVisitor {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        let attrs = item_attrs(i);
        if self.in_test == 0 && attrs.iter().any(is_test_attr) {
            let span = syn::spanned::Spanned::span(i);
            self.test_lines += span.end().line - span.start().line + 1;
        }
        self.enter(attrs, |v| visit::visit_item(v, i));
    }

    fn visit_item_struct(&mut self, i: &'ast syn::ItemStruct) {
        let clap = has_attr_word(&i.attrs, &["derive"], "Args")
            || has_attr_word(&i.attrs, &["derive"], "Parser");
        if clap && self.in_test == 0 {
            for field in &i.fields {
                if has_attr_word(&field.attrs, &["command", "clap"], "flatten") {
                    continue;
                }
                if let (Some(long), Some(name)) = (long_flag(field), &field.ident) {
                    let site = format!("{}:{}", self.file, line(name.span()));
                    let owner = i.ident.to_string();
                    self.flags.push(Flag { long, owner, site });
                }
            }
        }
        visit::visit_item_struct(self, i);
    }

    fn visit_item_mod(&mut self, i: &'ast syn::ItemMod) {
        self.scope.push(i.ident.to_string());
        if i.content.is_some() {
            if self.in_test == 0 {
                self.inline_mods.push(self.scope.clone());
            }
            visit::visit_item_mod(self, i);
        } else if self.in_test > 0 {
            self.test_mods.push(self.scope.clone());
        }
        self.scope.pop();
    }

    fn visit_item_use(&mut self, i: &'ast syn::ItemUse) {
        let mut paths = Vec::new();
        if i.leading_colon.is_none() {
            use_paths(&i.tree, &mut Vec::new(), &mut paths);
        }
        paths
            .iter()
            .for_each(|(path, line)| self.refer(path, *line));
    }

    /// `pub(super)` and `pub(in path)` say who may see an item: they import nothing.
    fn visit_vis_restricted(&mut self, _: &'ast syn::VisRestricted) {}

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.refer(&segments, line(p.segments[0].ident.span()));
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.scan_tokens(m.tokens.clone());
        visit::visit_macro(self, m);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let owner = match &*i.self_ty {
            syn::Type::Path(t) => t.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        self.with_owner(owner, |v| visit::visit_item_impl(v, i));
    }

    fn visit_item_trait(&mut self, i: &'ast syn::ItemTrait) {
        self.with_owner(Some(i.ident.to_string()), |v| visit::visit_item_trait(v, i));
    }

    fn visit_item_fn(&mut self, i: &'ast syn::ItemFn) {
        self.function(&i.sig, &i.block, |v| visit::visit_item_fn(v, i));
    }

    fn visit_impl_item_fn(&mut self, i: &'ast syn::ImplItemFn) {
        self.enter(&i.attrs, |v| {
            v.function(&i.sig, &i.block, |v| visit::visit_impl_item_fn(v, i))
        });
    }

    fn visit_trait_item_fn(&mut self, i: &'ast syn::TraitItemFn) {
        self.enter(&i.attrs, |v| match &i.default {
            Some(body) => v.function(&i.sig, body, |v| visit::visit_trait_item_fn(v, i)),
            None => visit::visit_trait_item_fn(v, i),
        });
    }
}

/// from -> to -> the edges that make that arrow.
type Graph<'a> = BTreeMap<&'a str, BTreeMap<&'a str, Vec<&'a Edge>>>;

/// Breadth-first from `start` inside `within`: each module reached, with the one it came from.
fn bfs<'a>(
    g: &Graph<'a>,
    start: &'a str,
    within: impl Fn(&str) -> bool,
) -> BTreeMap<&'a str, &'a str> {
    let mut parent = BTreeMap::from([(start, start)]);
    let mut queue = VecDeque::from([start]);
    while let Some(n) = queue.pop_front() {
        for &next in g.get(n).into_iter().flat_map(BTreeMap::keys) {
            if within(next) && !parent.contains_key(next) {
                parent.insert(next, n);
                queue.push_back(next);
            }
        }
    }
    parent
}

/// Each strongly connected group of more than one module. Every edge inside such a group lies on
/// a cycle: for each, the shortest cycle through it is reported, with the sites of its edges.
fn cycle_report(modules: &BTreeSet<String>, edges: &[Edge]) -> (String, Vec<String>) {
    groups_report(modules, edges, |_| true)
}

/// Each strongly connected group of files that spans two folders, its cycles reported as
/// [`cycle_report`] does; a group inside one folder is that folder's business.
fn file_cycle_report(a: &Analysis) -> (String, Vec<String>) {
    let files: BTreeSet<String> = a.folders.keys().cloned().collect();
    let folders = |group: &BTreeSet<&str>| {
        let folders: BTreeSet<&String> = group.iter().map(|f| &a.folders[*f]).collect();
        folders.len() > 1
    };
    groups_report(&files, &a.file_edges, folders)
}

/// The groups of [`cycle_report`] that `keep` keeps.
fn groups_report(
    modules: &BTreeSet<String>,
    edges: &[Edge],
    keep: impl Fn(&BTreeSet<&str>) -> bool,
) -> (String, Vec<String>) {
    let mut g = Graph::new();
    for e in edges {
        let edges = g.entry(e.from.as_str()).or_default();
        edges.entry(e.to.as_str()).or_default().push(e);
    }
    let reach = |m: &str| bfs(&g, modules.get(m).unwrap().as_str(), |_| true);
    let (mut seen, mut cycles) = (BTreeSet::new(), BTreeSet::new());
    for m in modules.iter().map(String::as_str) {
        let forward = reach(m);
        let group: BTreeSet<&str> = forward
            .keys()
            .copied()
            .filter(|n| reach(n).contains_key(m))
            .collect();
        if group.len() < 2 || !keep(&group) || !seen.insert(group.clone()) {
            continue;
        }
        for (&u, targets) in g.iter().filter(|(u, _)| group.contains(*u)) {
            for &v in targets.keys().filter(|v| group.contains(*v)) {
                let parent = bfs(&g, v, |n| group.contains(n));
                let mut cycle = vec![u];
                while cycle.last() != Some(&v) {
                    cycle.push(parent[cycle.last().unwrap()]);
                }
                cycle.reverse(); // v .. u
                let min = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap();
                cycle.rotate_left(min);
                cycles.insert(cycle);
            }
        }
    }
    let problems = cycles.iter().map(|c| describe_cycle(c, &g)).collect();
    let edges: usize = g.values().map(BTreeMap::len).sum();
    let summary = format!(
        "checked {} modules, {edges} edges, {} cycles in {} groups",
        modules.len(),
        cycles.len(),
        seen.len()
    );
    (summary, problems)
}

fn describe_cycle(cycle: &[&str], g: &Graph) -> String {
    let mut text = format!("cycle {} -> {}", cycle.join(" -> "), cycle[0]);
    for (i, from) in cycle.iter().enumerate() {
        let to = cycle[(i + 1) % cycle.len()];
        let mut sites: Vec<_> = g[from][to]
            .iter()
            .map(|e| (&e.file, e.line, e.site()))
            .collect();
        sites.sort();
        sites.dedup();
        let sites: Vec<_> = sites.into_iter().map(|(_, _, site)| site).collect();
        text += &format!("\n    {from} -> {to}: {}", sites.join(", "));
    }
    text
}

fn function_report(a: &Analysis) -> (String, Vec<String>) {
    let mut long: Vec<&Function> = a
        .functions
        .iter()
        .filter(|f| f.lines > MAX_FN_LINES)
        .collect();
    long.sort_by(|x, y| y.lines.cmp(&x.lines).then(x.site.cmp(&y.site)));
    let longest = a.functions.iter().max_by_key(|f| f.lines);
    let summary = format!(
        "checked {} functions outside test code, longest {}; {} over {MAX_FN_LINES} lines",
        a.functions.len(),
        longest.map_or("none".into(), |f| format!(
            "{} lines at {} {}",
            f.lines, f.site, f.name
        )),
        long.len()
    );
    let problems = long
        .iter()
        .map(|f| format!("{} {} ({} lines)", f.site, f.name, f.lines));
    (summary, problems.collect())
}

/// Production files over 800 lines: a file under `#[cfg(test)]` is not counted, and in the
/// others the items under a test attribute (`#[cfg(test)] mod tests { .. }`) are not.
fn file_report(a: &Analysis) -> (String, Vec<String>) {
    let mut long: Vec<&FileSize> = a
        .files
        .iter()
        .filter(|f| f.lines > MAX_FILE_LINES)
        .collect();
    long.sort_by(|x, y| y.lines.cmp(&x.lines).then(x.file.cmp(&y.file)));
    let longest = a.files.iter().max_by_key(|f| f.lines);
    let summary = format!(
        "checked {} production files, longest {}; {} over {MAX_FILE_LINES} lines",
        a.files.len(),
        longest.map_or("none".into(), |f| format!("{} ({} lines)", f.file, f.lines)),
        long.len()
    );
    let problems = long
        .iter()
        .map(|f| format!("{} has {} production lines", f.file, f.lines));
    (summary, problems.collect())
}

/// Long flags declared by fields of more than one clap struct.
fn flag_report(a: &Analysis) -> (String, Vec<String>) {
    let mut by_flag: BTreeMap<&str, Vec<&Flag>> = BTreeMap::new();
    for flag in &a.flags {
        by_flag.entry(&flag.long).or_default().push(flag);
    }
    let mut problems = Vec::new();
    for (long, flags) in &by_flag {
        let owners: BTreeSet<&str> = flags.iter().map(|f| f.owner.as_str()).collect();
        if owners.len() > 1 {
            let sites: Vec<_> = flags
                .iter()
                .map(|f| format!("{} ({})", f.site, f.owner))
                .collect();
            problems.push(format!("flag --{long} declared by {}", sites.join(", ")));
        }
    }
    let summary = format!(
        "checked {} long flags of clap structs, {} declared twice or more",
        by_flag.len(),
        problems.len()
    );
    (summary, problems)
}

/// README.md's length, then every relative link of README.md and docs/*.md.
fn doc_report(root: &Path) -> (String, Vec<String>) {
    let mut problems = Vec::new();
    let readme = root.join("README.md");
    let lines = fs::read_to_string(&readme).map_or(0, |t| t.lines().count());
    if lines > MAX_README_LINES {
        problems.push(format!(
            "README.md has {lines} lines, more than {MAX_README_LINES}"
        ));
    }
    let mut docs: Vec<PathBuf> = (fs::read_dir(root.join("docs")).into_iter().flatten())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, readme);
    let mut links = 0;
    for doc in &docs {
        let name = doc.strip_prefix(root).unwrap().display();
        for (line, target) in links_in(&fs::read_to_string(doc).unwrap()) {
            links += 1;
            if let Err(why) = check_link(root, doc, &target) {
                problems.push(format!("{name}:{line}: link ({target}) {why}"));
            }
        }
    }
    let summary = format!(
        "README.md has {lines} lines (at most {MAX_README_LINES}); checked {links} relative links in {} files",
        docs.len()
    );
    (summary, problems)
}

/// Lines of markdown outside fenced code blocks, with their 1-based numbers.
fn prose_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut fenced = false;
    text.lines().enumerate().filter_map(move |(i, line)| {
        let fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        fenced ^= fence;
        (!fenced && !fence).then_some((i + 1, line))
    })
}

/// The relative targets of `[text](target)` links, outside code blocks and code spans.
fn links_in(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    for (number, line) in prose_lines(text) {
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        for (_, rest) in prose
            .match_indices("](")
            .map(|(i, _)| prose.split_at(i + 2))
        {
            let inside = rest.split(')').next().unwrap_or_default();
            let target = inside.split_whitespace().next().unwrap_or_default();
            let target = target.trim_start_matches('<').trim_end_matches('>');
            let external = target.contains("://") || target.starts_with("mailto:");
            if !target.is_empty() && !external {
                links.push((number, target.to_string()));
            }
        }
    }
    links
}

fn check_link(root: &Path, doc: &Path, target: &str) -> Result<(), String> {
    let (file, anchor) = target
        .split_once('#')
        .map_or((target, None), |(f, a)| (f, Some(a)));
    let path = match file {
        "" => doc.to_path_buf(),
        _ if file.starts_with('/') => root.join(file.trim_start_matches('/')),
        _ => doc.parent().unwrap().join(file),
    };
    if !path.exists() {
        return Err(format!("points to {file}, which does not exist"));
    }
    match anchor {
        Some(anchor) if path.extension().is_some_and(|e| e == "md") => {
            let text = fs::read_to_string(&path).unwrap();
            match heading_slugs(&text).contains(anchor) {
                true => Ok(()),
                false => Err(format!(
                    "has anchor #{anchor}, but no heading slugifies to it"
                )),
            }
        }
        _ => Ok(()),
    }
}

/// GitHub's anchors for the headings of a markdown text; a repeated one gets `-1`, `-2`, ...
fn heading_slugs(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut slugs = BTreeSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.len() - line.trim_start_matches('#').len();
        let title = &line[hashes..];
        if !(1..=6).contains(&hashes) || !(title.is_empty() || title.starts_with(' ')) {
            continue;
        }
        let slug = slugify(title.trim().trim_end_matches('#'));
        let count = seen.entry(slug.clone()).or_insert(0);
        slugs.insert(if *count == 0 {
            slug.clone()
        } else {
            format!("{slug}-{count}")
        });
        *count += 1;
    }
    slugs
}

/// Lowercase, spaces to `-`, punctuation other than `-` and `_` dropped.
fn slugify(heading: &str) -> String {
    let keep = |c: char| match c {
        ' ' => Some('-'),
        '-' | '_' => Some(c),
        c if c.is_alphanumeric() => Some(c),
        _ => None,
    };
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(keep)
        .collect()
}

fn enforce(what: &str, (summary, problems): (String, Vec<String>)) {
    println!("{summary}");
    assert!(problems.is_empty(), "{what}:\n{}", problems.join("\n"));
}

fn project() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The workspace's two crates, analysed apart: the binary (src/) and the pure core
/// (crates/core/src/), whose modules are analysed as those of one module `core`, so that
/// its top-level modules are held to the rules of one folder (leaves apart). The compiler
/// keeps the core from importing the binary.
fn crates() -> [Analysis; 2] {
    [
        analyze(project(), &[], &[]),
        analyze(&project().join("crates/core"), LEAVES, &["core"]),
    ]
}

fn enforce_each(what: &str, report: fn(&Analysis) -> (String, Vec<String>)) {
    for a in crates() {
        enforce(what, report(&a));
    }
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    enforce_each(
        "import cycles between the top-level modules of a crate",
        |a| cycle_report(&a.modules, &a.edges),
    );
}

#[test]
fn no_import_cycle_between_the_files_of_one_folder() {
    enforce_each(
        "import cycles between the sibling modules of one folder",
        |a| cycle_report(&a.nested, &a.sibling_edges),
    );
}

#[test]
fn no_import_cycle_of_files_spans_two_folders() {
    enforce_each(
        "import cycles of files that span two folders",
        file_cycle_report,
    );
}

#[test]
fn leaves_import_only_leaves() {
    enforce_each("leaves that import what is no leaf", leaf_report);
}

#[test]
fn no_function_over_80_lines_outside_tests() {
    enforce_each("functions over 80 lines outside test code", function_report);
}

#[test]
fn no_production_file_over_800_lines() {
    enforce_each("production files over 800 lines", file_report);
}

#[test]
fn no_long_flag_declared_twice() {
    enforce_each("long flags declared by two clap structs", flag_report);
}

#[test]
fn readme_is_short_and_doc_links_resolve() {
    enforce("README.md and docs/*.md", doc_report(project()));
}

/// A crate of these files (path, text) in a temporary folder.
fn tree(files: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

/// A function `header { .. }` of `lines` lines in all.
fn long_fn(header: &str, lines: usize) -> String {
    format!("{header} {{\n{}}}\n", "    let _x = 0;\n".repeat(lines - 2))
}

#[test]
fn synthetic_clean_crate_passes() {
    let dir = tree(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\n".into()),
        (
            "src/a.rs",
            "use crate::b::{self, inner::one};\npub fn f() -> u8 { b::g() + one() }\n".into(),
        ),
        (
            "src/b/mod.rs",
            "pub mod inner;\npub fn g() -> u8 { inner::one() }\n".into(),
        ),
        (
            "src/b/inner.rs",
            long_fn("pub fn one() -> u8", MAX_FN_LINES).replace("}\n", "1 }\n"),
        ),
        (
            "README.md",
            "# Title\n\nSee [the guide](docs/guide.md#getting-started), [web](https://x.org).\n"
                .into(),
        ),
        (
            "docs/guide.md",
            "# Guide\n\n## Getting started!\n\nBack to the [README](../README.md#title).\n".into(),
        ),
    ]);
    let analysis = analyze(dir.path(), &[], &[]);
    assert_eq!(analysis.modules, BTreeSet::from(["a".into(), "b".into()]));
    let edges: Vec<_> = analysis
        .edges
        .iter()
        .map(|e| (&*e.from, &*e.to, e.site()))
        .collect();
    let site = "src/a.rs:1".to_string();
    assert_eq!(edges, [("a", "b", site.clone()), ("a", "b", site)]);
    for (summary, problems) in [
        cycle_report(&analysis.modules, &analysis.edges),
        function_report(&analysis),
        doc_report(dir.path()),
    ] {
        println!("{summary}");
        assert!(problems.is_empty(), "{problems:#?}");
    }
}

#[test]
fn synthetic_cyclic_crate_is_caught() {
    let c_rs = "pub const K: u8 = 0;\npub fn k() -> u8 { super::b::g() }\npub struct S;\nimpl S {\n"
        .to_string()
        + &long_fn("fn long()", MAX_FN_LINES + 1)
        + &long_fn("fn at_limit()", MAX_FN_LINES)
        + &long_fn("#[test]\nfn long_test()", 90)
        + "}\n#[cfg(test)]\nmod tests {\n"
        + &long_fn("fn helper()", 90) + "}\n";
    let dir = tree(&[
        ("src/lib.rs", "pub mod a;\npub mod b;\npub mod c;\n".into()),
        (
            "src/a.rs",
            "pub fn f() {\n    println!(\"{}\", crate::b::g());\n}\n".into(),
        ),
        (
            "src/b/mod.rs",
            "mod x;\n#[cfg(test)]\nmod tests;\npub fn g() -> u8 { 1 }\n".into(),
        ),
        (
            "src/b/x.rs",
            "use super::super::{a, c::K};\npub fn h() { a::f() }\n".into(),
        ),
        ("src/b/tests.rs", long_fn("fn in_test_file()", 90)),
        ("src/c.rs", c_rs),
        (
            "README.md",
            "[gone](missing.md)\n[bad anchor](docs/g.md#nope)\n".repeat(126),
        ),
        ("docs/g.md", "# G\n".into()),
    ]);
    let analysis = analyze(dir.path(), &[], &[]);
    let (summary, cycles) = cycle_report(&analysis.modules, &analysis.edges);
    println!("{summary}\n{}", cycles.join("\n"));
    assert_eq!(
        cycles,
        [
            "cycle a -> b -> a\n    a -> b: src/a.rs:2\n    b -> a: src/b/x.rs:1",
            "cycle b -> c -> b\n    b -> c: src/b/x.rs:1\n    c -> b: src/c.rs:2",
        ]
    );
    let (summary, long) = function_report(&analysis);
    println!("{summary}");
    assert_eq!(long, ["src/c.rs:5 S::long (81 lines)"]);
    let (summary, docs) = doc_report(dir.path());
    println!("{summary}");
    assert_eq!(docs.len(), 1 + 2 * 126, "{docs:#?}");
    assert_eq!(docs[0], "README.md has 252 lines, more than 250");
    assert_eq!(
        docs[1],
        "README.md:1: link (missing.md) points to missing.md, which does not exist"
    );
    assert_eq!(
        docs[2],
        "README.md:2: link (docs/g.md#nope) has anchor #nope, but no heading slugifies to it"
    );
}

/// `n` lines of production code.
fn lines_of_code(n: usize) -> String {
    "pub const X: u8 = 0;\n".repeat(n)
}

#[test]
fn synthetic_clean_folders_files_and_flags_pass() {
    let findings = "use crate::cost::report::model::Report;\npub fn analyze(_: &Report) {}\n"
        .to_string()
        + "#[cfg(test)]\nmod tests {\n    use crate::cost::report::Report;\n"
        + &long_fn("    fn helper()", 50)
        + "}\n"
        + &lines_of_code(MAX_FILE_LINES - 2);
    let cli = "#[derive(Debug, Parser)]\nstruct Cli {\n    #[arg(long)]\n    dry_run: bool,\n"
        .to_string()
        + "    #[command(flatten)]\n    verbose: Common,\n}\n"
        + "#[derive(Debug, Args)]\nstruct Common {\n    #[arg(short, long, value_name = \"N\")]\n"
        + "    verbose: u8,\n    #[arg(long = \"dry-run-twice\")]\n    twice: bool,\n}\n"
        + "struct NotClap {\n    #[arg(long)]\n    dry_run: bool,\n}\n";
    let dir = tree(&[
        ("src/lib.rs", "pub mod cli;\npub mod cost;\n".into()),
        ("src/cli.rs", cli),
        (
            "src/cost/mod.rs",
            "pub mod findings;\npub mod report;\n#[cfg(test)]\nmod big_tests;\n".into(),
        ),
        (
            "src/cost/report/mod.rs",
            "pub mod build;\npub mod model;\npub use model::*;\n".into(),
        ),
        ("src/cost/report/model.rs", "pub struct Report;\n".into()),
        (
            "src/cost/report/build.rs",
            "use crate::cost::findings;\npub fn build() { findings::analyze(&super::Report) }\n"
                .into(),
        ),
        ("src/cost/findings/mod.rs", findings),
        ("src/cost/big_tests.rs", lines_of_code(MAX_FILE_LINES + 100)),
    ]);
    // Unmarked, the model is one more file of `cost::report`, and findings' import of it a
    // loop through an inner file: cost::report -> cost::findings -> cost::report.
    let unmarked = analyze(dir.path(), &[], &[]);
    let (_, cycles) = cycle_report(&unmarked.nested, &unmarked.sibling_edges);
    assert_eq!(cycles.len(), 1, "{cycles:#?}");
    assert!(cycles[0].starts_with("cycle cost::findings -> cost::report -> cost::findings\n"));
    let analysis = analyze(dir.path(), &["src/cost/report/model.rs"], &[]);
    let edges: Vec<_> = analysis
        .sibling_edges
        .iter()
        .map(|e| (&*e.from, &*e.to, e.site()))
        .collect();
    let site = "src/cost/report/build.rs:1".to_string();
    assert_eq!(edges, [("cost::report", "cost::findings", site)]);
    let findings_file = analysis
        .files
        .iter()
        .find(|f| f.file.ends_with("findings/mod.rs"));
    assert_eq!(findings_file.map(|f| f.lines), Some(MAX_FILE_LINES));
    assert_eq!(analysis.flags.len(), 3);
    for (summary, problems) in [
        cycle_report(&analysis.nested, &analysis.sibling_edges),
        leaf_report(&analysis),
        file_report(&analysis),
        flag_report(&analysis),
    ] {
        println!("{summary}");
        assert!(problems.is_empty(), "{problems:#?}");
    }
}

#[test]
fn synthetic_folder_cycle_long_file_and_twice_declared_flag_are_caught() {
    let cli = "#[derive(Args)]\nstruct A {\n    #[arg(long)]\n    db: String,\n}\n".to_string()
        + "#[derive(clap::Parser)]\nstruct B {\n    #[arg(short, long = \"db\")]\n"
        + "    database: String,\n}\n";
    let long = lines_of_code(MAX_FILE_LINES + 1)
        + "#[cfg(test)]\nmod tests {\n"
        + &long_fn("    fn helper()", 50)
        + "}\n";
    let dir = tree(&[
        ("src/lib.rs", "pub mod cli;\npub mod cost;\n".into()),
        ("src/cli.rs", cli),
        (
            "src/cost/mod.rs",
            "pub mod findings;\npub mod long;\npub mod report;\n".into(),
        ),
        (
            "src/cost/report.rs",
            "use crate::cost::findings::Finding;\npub struct Report(Finding);\n".into(),
        ),
        (
            "src/cost/findings/mod.rs",
            "mod sql;\npub struct Finding;\n".into(),
        ),
        (
            "src/cost/findings/sql.rs",
            "use crate::cost::report::Report;\n".into(),
        ),
        ("src/cost/long.rs", long),
    ]);
    let analysis = analyze(dir.path(), &[], &[]);
    let (summary, cycles) = cycle_report(&analysis.nested, &analysis.sibling_edges);
    println!("{summary}");
    assert_eq!(
        cycles,
        [
            "cycle cost::findings -> cost::report -> cost::findings\n    \
          cost::findings -> cost::report: src/cost/findings/sql.rs:1\n    \
          cost::report -> cost::findings: src/cost/report.rs:1"
        ]
    );
    let (summary, long) = file_report(&analysis);
    println!("{summary}");
    assert_eq!(long, ["src/cost/long.rs has 801 production lines"]);
    let (summary, flags) = flag_report(&analysis);
    println!("{summary}");
    assert_eq!(
        flags,
        ["flag --db declared by src/cli.rs:4 (A), src/cli.rs:9 (B)"]
    );
}

/// Issue 43's loop, planted: the model names churn's `Windows`, churn names delta, and delta
/// an inner file of the model. Unmarked, the cycle check sees the loop through
/// `cost::report`; with the model marked a leaf, the leaf check names its import of churn (and
/// a leaf marked that holds no file).
#[test]
fn synthetic_loop_through_an_inner_file_and_a_leaf_that_imports_are_caught() {
    let model = "pub mod invalid;\npub struct Report(pub crate::cost::churn::Windows);\n";
    let dir = tree(&[
        ("src/lib.rs", "pub mod cost;\n".into()),
        (
            "src/cost/mod.rs",
            "pub mod churn;\npub mod delta;\npub mod report;\n".into(),
        ),
        ("src/cost/report/mod.rs", "pub mod model;\n".into()),
        ("src/cost/report/model/mod.rs", model.into()),
        (
            "src/cost/report/model/invalid.rs",
            "pub struct Invalid;\n".into(),
        ),
        (
            "src/cost/churn.rs",
            "use crate::cost::delta::per_request;\npub struct Windows;\n".into(),
        ),
        (
            "src/cost/delta.rs",
            "use super::report::model::invalid::Invalid;\npub fn per_request() {}\n".into(),
        ),
    ]);
    let plain = analyze(dir.path(), &[], &[]);
    let (summary, cycles) = cycle_report(&plain.nested, &plain.sibling_edges);
    println!("{summary}");
    assert_eq!(
        cycles,
        [
            "cycle cost::churn -> cost::delta -> cost::report -> cost::churn\n    \
             cost::churn -> cost::delta: src/cost/churn.rs:1\n    \
             cost::delta -> cost::report: src/cost/delta.rs:1\n    \
             cost::report -> cost::churn: src/cost/report/model/mod.rs:2"
        ]
    );
    let (_, files) = file_cycle_report(&plain);
    assert!(files.is_empty(), "no circle of files: {files:#?}");
    let marked = analyze(dir.path(), &["src/cost/report/model/", "src/gone/"], &[]);
    let (_, cycles) = cycle_report(&marked.nested, &marked.sibling_edges);
    assert!(cycles.is_empty(), "{cycles:#?}");
    let (summary, leaves) = leaf_report(&marked);
    println!("{summary}");
    assert_eq!(
        leaves,
        [
            "src/gone/ is marked a leaf, but holds no production file",
            "src/cost/report/model/mod.rs:2 imports src/cost/churn.rs, which is no leaf"
        ]
    );
}

/// A circle of files that spans two folders is caught, followed through a relative child
/// path (`rules::check`), `super::super::` and a full path in a type; a circle inside one
/// folder, through its `mod.rs`, is that folder's business.
#[test]
fn synthetic_file_cycle_across_folders_is_caught() {
    let dir = tree(&[
        ("src/lib.rs", "pub mod cost;\npub mod render;\n".into()),
        (
            "src/cost/mod.rs",
            "pub mod findings;\npub mod report;\n".into(),
        ),
        (
            "src/cost/report/mod.rs",
            "pub mod model;\npub use model::Report;\n".into(),
        ),
        (
            "src/cost/report/model.rs",
            "pub struct Report(pub Vec<crate::cost::findings::Finding>);\n".into(),
        ),
        (
            "src/cost/findings/mod.rs",
            "mod rules;\npub struct Finding;\npub fn all() { rules::check() }\n".into(),
        ),
        (
            "src/cost/findings/rules.rs",
            "use super::super::report::model::Report;\npub fn check() {}\n".into(),
        ),
        (
            "src/render/mod.rs",
            "mod sections;\npub use sections::Grid;\npub fn figure() {}\n".into(),
        ),
        (
            "src/render/sections.rs",
            "use super::figure;\npub struct Grid;\n".into(),
        ),
    ]);
    let (summary, cycles) = file_cycle_report(&analyze(dir.path(), &[], &[]));
    println!("{summary}");
    assert_eq!(
        cycles,
        [
            "cycle src/cost/findings/mod.rs -> src/cost/findings/rules.rs -> \
             src/cost/report/model.rs -> src/cost/findings/mod.rs\n    \
             src/cost/findings/mod.rs -> src/cost/findings/rules.rs: src/cost/findings/mod.rs:3\n    \
             src/cost/findings/rules.rs -> src/cost/report/model.rs: src/cost/findings/rules.rs:1\n    \
             src/cost/report/model.rs -> src/cost/findings/mod.rs: src/cost/report/model.rs:1"
        ]
    );
}
