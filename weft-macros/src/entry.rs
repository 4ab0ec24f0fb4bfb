//! `#[weft::main]` and `#[weft::test]`: run an `async fn` on a weft runtime.
//!
//! Both accept tokio's argument set: `flavor = "multi_thread" | "current_thread" | "local"`,
//! `worker_threads = N` (multi-thread only), `start_paused`, `name = "…"` (`Builder::name`)
//! and `crate = "path"`. `#[weft::main]` on a function other than `main` may take arguments
//! (a trait method's `self`, say): the body's `async move` block captures them.
//! `flavor = "local"` builds a `runtime::LocalRuntime` (`build_local`); `start_paused = true`
//! emits `.start_paused(true)`, which needs weft's `test-util` feature (as tokio's needs its own).
//! `main` defaults to the multi-thread flavor, `test` to the current-thread one. The expansion
//! builds the runtime through `<crate>::__private::Builder` with every driver enabled and calls
//! `block_on` on the function's body; misuse (a non-async function, an unknown argument, test
//! arguments) is a compile error pointing at the offending tokens.
//!
//! The crate path is found the way a user names the dependency: `proc-macro-crate` reads the
//! calling package's `Cargo.toml`, so `tokio = { package = "weft", … }` makes the expansion
//! say `::tokio::…`, which is what lets tokio code port by renaming the dependency; a package
//! that depends on no `weft` but on `tokio` (the facade patched in for a whole graph,
//! `compat/tokio/`) gets `::tokio::…` too. An explicit
//! `crate = "…"` wins; when the manifest cannot be read the path falls back to `::weft`.
//!
//! `unhandled_panic` (unstable in tokio) is not supported: it is rejected with a compile error
//! rather than silently ignored.

use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ItemFn, Lit, MetaNameValue, Token};

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Main,
    Test,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Flavor {
    MultiThread,
    CurrentThread,
    Local,
}

struct Config {
    flavor: Flavor,
    worker_threads: Option<(usize, Span)>,
    start_paused: Option<(bool, Span)>,
    name: Option<String>,
    crate_path: syn::Path,
}

/// The path under which the calling package imported weft (`::weft`, `::tokio`, …).
fn default_crate_path() -> syn::Path {
    use proc_macro_crate::{crate_name, FoundCrate};
    // weft under its own name or renamed; else the `tokio` facade (`compat/tokio/`, a crate
    // named `tokio` that re-exports weft), which a patched graph's crates see as `::tokio`.
    match crate_name("weft").or_else(|_| crate_name("tokio")) {
        Ok(FoundCrate::Name(name)) => {
            let ident = syn::Ident::new(&name, Span::call_site());
            syn::parse_quote!(::#ident)
        }
        // `Itself`: weft's own tests and examples (or the facade's), which see the library as
        // `::weft`.
        Ok(FoundCrate::Itself) | Err(_) => syn::parse_quote!(::weft),
    }
}

fn parse_args(args: TokenStream2, kind: Kind) -> syn::Result<Config> {
    let mut config = Config {
        flavor: if kind == Kind::Main { Flavor::MultiThread } else { Flavor::CurrentThread },
        worker_threads: None,
        start_paused: None,
        name: None,
        crate_path: default_crate_path(),
    };
    let metas = Punctuated::<MetaNameValue, Token![,]>::parse_terminated.parse2(args)?;
    for meta in metas {
        let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match name.as_str() {
            "flavor" => {
                config.flavor = match lit_str(&meta.value)?.as_str() {
                    "multi_thread" => Flavor::MultiThread,
                    "current_thread" => Flavor::CurrentThread,
                    "local" => Flavor::Local,
                    other => {
                        return Err(syn::Error::new(
                            meta.value.span(),
                            format!(
                                "unknown flavor `{other}`; expected \"multi_thread\", \"current_thread\" or \"local\""
                            ),
                        ))
                    }
                }
            }
            "worker_threads" => {
                let n = lit_int(&meta.value)?;
                if n == 0 {
                    return Err(syn::Error::new(meta.value.span(), "worker_threads must be greater than 0"));
                }
                config.worker_threads = Some((n, meta.value.span()));
            }
            "start_paused" => config.start_paused = Some((lit_bool(&meta.value)?, meta.value.span())),
            "name" => {
                let name = lit_str(&meta.value)?;
                if name.trim().is_empty() {
                    return Err(syn::Error::new(meta.value.span(), "the runtime name must not be empty"));
                }
                config.name = Some(name);
            }
            "crate" => {
                config.crate_path = syn::parse_str(&lit_str(&meta.value)?)
                    .map_err(|e| syn::Error::new(meta.value.span(), format!("invalid crate path: {e}")))?;
            }
            "unhandled_panic" => {
                return Err(syn::Error::new(
                    meta.path.span(),
                    "`unhandled_panic` is not supported by weft (it is unstable in tokio); \
                     a panicking task's JoinHandle returns the panic as a JoinError",
                ))
            }
            _ => {
                return Err(syn::Error::new(
                    meta.path.span(),
                    format!(
                    "unknown argument `{name}`; expected `flavor`, `worker_threads`, `start_paused`, `name` or `crate`"
                ),
                ))
            }
        }
    }
    if let (Flavor::CurrentThread | Flavor::Local, Some((_, span))) = (config.flavor, config.worker_threads) {
        return Err(syn::Error::new(
            span,
            "the `worker_threads` option requires the `multi_thread` runtime flavor. \
             Use `#[weft::main(flavor = \"multi_thread\")]`",
        ));
    }
    if let (Flavor::MultiThread, Some((true, span))) = (config.flavor, config.start_paused) {
        return Err(syn::Error::new(
            span,
            "the `start_paused` option requires the `current_thread` runtime flavor. \
             Use `#[weft::test(flavor = \"current_thread\")]`",
        ));
    }
    Ok(config)
}

fn lit_str(e: &Expr) -> syn::Result<String> {
    match e {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Ok(s.value()),
        _ => Err(syn::Error::new(e.span(), "expected a string literal")),
    }
}

fn lit_int(e: &Expr) -> syn::Result<usize> {
    match e {
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse(),
        _ => Err(syn::Error::new(e.span(), "expected an integer literal")),
    }
}

fn lit_bool(e: &Expr) -> syn::Result<bool> {
    match e {
        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Ok(b.value),
        _ => Err(syn::Error::new(e.span(), "expected `true` or `false`")),
    }
}

pub(crate) fn expand(args: TokenStream2, item: TokenStream2, kind: Kind) -> syn::Result<TokenStream2> {
    let mut func: ItemFn = syn::parse2(item)?;
    if func.sig.asyncness.is_none() {
        return Err(syn::Error::new(
            func.sig.fn_token.span(),
            "the `async` keyword is missing from the function declaration",
        ));
    }
    if kind == Kind::Test && !func.sig.inputs.is_empty() {
        return Err(syn::Error::new(func.sig.inputs.span(), "the test function cannot accept arguments"));
    }
    // Any other function (a trait method taking `self`, a helper taking parameters) may have
    // arguments: the body's `async move` block captures them.
    if kind == Kind::Main && func.sig.ident == "main" && !func.sig.inputs.is_empty() {
        return Err(syn::Error::new(func.sig.inputs.span(), "the main function cannot accept arguments"));
    }
    let config = parse_args(args, kind)?;
    let krate = &config.crate_path;
    let mut builder = match config.flavor {
        Flavor::CurrentThread | Flavor::Local => quote! { #krate::__private::Builder::new_current_thread() },
        Flavor::MultiThread => match config.worker_threads {
            Some((n, _)) => quote! { #krate::__private::Builder::new_multi_thread().worker_threads(#n) },
            None => quote! { #krate::__private::Builder::new_multi_thread() },
        },
    };
    if let Some((true, _)) = config.start_paused {
        builder = quote! { #builder.start_paused(true) };
    }
    if let Some(name) = &config.name {
        builder = quote! { #builder.name(#name) };
    }
    let build = match config.flavor {
        Flavor::Local => quote! { build_local(::core::default::Default::default()) },
        _ => quote! { build() },
    };
    func.sig.asyncness = None;
    let body = &func.block;
    let span = body.span();
    let new_body = quote_spanned! {span=>
        {
            let body = async move #body;
            #[allow(clippy::expect_used)]
            #builder
                .enable_all()
                .#build
                .expect("Failed building the Runtime")
                .block_on(body)
        }
    };
    func.block = syn::parse2(new_body)?;
    let test_attr = if kind == Kind::Test {
        quote! { #[::core::prelude::v1::test] }
    } else {
        quote! {}
    };
    Ok(quote! { #test_attr #func })
}
