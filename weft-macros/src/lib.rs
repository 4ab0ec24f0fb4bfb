//! `#[weft::main]` and `#[weft::test]`: run an `async fn` on a weft runtime.
//!
//! Both accept `flavor = "multi_thread" | "current_thread"` and `worker_threads = N` (the
//! latter only with the multi-thread flavor), like tokio's macros. `main` defaults to the
//! multi-thread flavor, `test` to the current-thread one. The expansion builds the runtime
//! through `weft::__private::Builder` with every driver enabled and calls `block_on` on the
//! function's body; misuse (a non-async function, an unknown argument, test arguments) is a
//! compile error pointing at the offending tokens.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{quote, quote_spanned};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ItemFn, Lit, MetaNameValue, Token};

/// Marks the async `main` function to run on a weft runtime (multi-thread by default).
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args.into(), item.into(), Kind::Main).unwrap_or_else(|e| e.to_compile_error()).into()
}

/// Marks an async test to run on a weft runtime (current-thread by default).
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(args.into(), item.into(), Kind::Test).unwrap_or_else(|e| e.to_compile_error()).into()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Main,
    Test,
}

#[derive(Clone, Copy, PartialEq)]
enum Flavor {
    MultiThread,
    CurrentThread,
}

struct Config {
    flavor: Flavor,
    worker_threads: Option<(usize, Span)>,
    crate_path: syn::Path,
}

fn parse_args(args: TokenStream2, kind: Kind) -> syn::Result<Config> {
    let mut config = Config {
        flavor: if kind == Kind::Main { Flavor::MultiThread } else { Flavor::CurrentThread },
        worker_threads: None,
        crate_path: syn::parse_quote!(::weft),
    };
    let metas = Punctuated::<MetaNameValue, Token![,]>::parse_terminated.parse2(args)?;
    for meta in metas {
        let name = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        match name.as_str() {
            "flavor" => {
                config.flavor = match lit_str(&meta.value)?.as_str() {
                    "multi_thread" => Flavor::MultiThread,
                    "current_thread" => Flavor::CurrentThread,
                    other => {
                        return Err(syn::Error::new(
                            meta.value.span(),
                            format!("unknown flavor `{other}`; expected \"multi_thread\" or \"current_thread\""),
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
            "crate" => {
                config.crate_path = syn::parse_str(&lit_str(&meta.value)?)
                    .map_err(|e| syn::Error::new(meta.value.span(), format!("invalid crate path: {e}")))?;
            }
            _ => {
                return Err(syn::Error::new(
                    meta.path.span(),
                    format!("unknown argument `{name}`; expected `flavor`, `worker_threads` or `crate`"),
                ))
            }
        }
    }
    if let (Flavor::CurrentThread, Some((_, span))) = (config.flavor, config.worker_threads) {
        return Err(syn::Error::new(
            span,
            "worker_threads is only valid with flavor = \"multi_thread\"; the current-thread runtime runs on the calling thread",
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

fn expand(args: TokenStream2, item: TokenStream2, kind: Kind) -> syn::Result<TokenStream2> {
    let mut func: ItemFn = syn::parse2(item)?;
    if func.sig.asyncness.is_none() {
        return Err(syn::Error::new(
            func.sig.fn_token.span(),
            "the `async` keyword is missing from the function declaration",
        ));
    }
    if kind == Kind::Test && !func.sig.inputs.is_empty() {
        return Err(syn::Error::new(func.sig.inputs.span(), "test functions cannot take arguments"));
    }
    if kind == Kind::Main && func.sig.ident != "main" && !func.sig.inputs.is_empty() {
        return Err(syn::Error::new(func.sig.inputs.span(), "`#[weft::main]` functions cannot take arguments"));
    }
    let config = parse_args(args, kind)?;
    let krate = &config.crate_path;
    let builder = match config.flavor {
        Flavor::CurrentThread => quote! { #krate::__private::Builder::new_current_thread() },
        Flavor::MultiThread => match config.worker_threads {
            Some((n, _)) => quote! { #krate::__private::Builder::new_multi_thread().worker_threads(#n) },
            None => quote! { #krate::__private::Builder::new_multi_thread() },
        },
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
                .build()
                .expect("failed to build the weft runtime")
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
