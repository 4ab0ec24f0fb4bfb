//! weft's procedural macros: the `#[weft::main]`/`#[weft::test]` attributes (`entry`) and the
//! code generators behind `weft::select!`, `weft::join!` and `weft::try_join!` (`select`,
//! `join`).
//!
//! The function-like macros are not called by users directly: weft's `macro_rules!` wrappers
//! (weft/src/macros/) call them with `$crate` as the first token group, so the generated code
//! names weft's support items by a path that works under any dependency name. They are
//! procedural because their expansion is indexed by branch (one local, one enum variant and one
//! match arm per branch): with a proc macro the branch count is limited only by the compiler,
//! not by a hand-written table of arities.

use proc_macro::TokenStream;

mod entry;
mod join;
mod select;

/// Marks the async `main` function to run on a weft runtime (multi-thread by default).
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    entry::expand(args.into(), item.into(), entry::Kind::Main).unwrap_or_else(|e| e.to_compile_error()).into()
}

/// Marks an async test to run on a weft runtime (current-thread by default).
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    entry::expand(args.into(), item.into(), entry::Kind::Test).unwrap_or_else(|e| e.to_compile_error()).into()
}

/// Implementation of `weft::select!`; call that instead.
#[doc(hidden)]
#[proc_macro]
pub fn select_impl(input: TokenStream) -> TokenStream {
    select::expand(input.into()).unwrap_or_else(|e| e.to_compile_error()).into()
}

/// Implementation of `weft::join!`; call that instead.
#[doc(hidden)]
#[proc_macro]
pub fn join_impl(input: TokenStream) -> TokenStream {
    join::expand(input.into(), false).unwrap_or_else(|e| e.to_compile_error()).into()
}

/// Implementation of `weft::try_join!`; call that instead.
#[doc(hidden)]
#[proc_macro]
pub fn try_join_impl(input: TokenStream) -> TokenStream {
    join::expand(input.into(), true).unwrap_or_else(|e| e.to_compile_error()).into()
}

/// Splits `($crate) rest…` into the crate path tokens and the rest.
fn split_crate(input: proc_macro2::TokenStream) -> syn::Result<(proc_macro2::TokenStream, proc_macro2::TokenStream)> {
    let mut iter = input.into_iter();
    match iter.next() {
        Some(proc_macro2::TokenTree::Group(g)) => Ok((g.stream(), iter.collect())),
        _ => Err(syn::Error::new(
            proc_macro2::Span::call_site(),
            "internal macro: call `weft::select!`, `weft::join!` or `weft::try_join!` instead",
        )),
    }
}
