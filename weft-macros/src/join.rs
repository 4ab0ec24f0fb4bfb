//! `join!` and `try_join!`: poll every future in one `poll_fn` until all are done (or, for
//! `try_join!`, until one returns `Err`).
//!
//! Input (after the `($crate)` group): `[biased;] future, future, …`. Each future is wrapped
//! in weft's `MaybeDone` (weft/src/macros/support.rs), pinned on the stack of the macro's
//! expression. Without `biased;` each poll starts at the next index in turn, so a future that
//! is always ready cannot starve the ones after it; with `biased;` polling always starts at
//! the first. The task's coop budget is checked before each poll, as in `select!`.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Token};

mod kw {
    syn::custom_keyword!(biased);
}

pub(crate) fn expand(input: TokenStream, is_try: bool) -> syn::Result<TokenStream> {
    let (krate, rest) = crate::split_crate(input)?;
    let parser = |input: syn::parse::ParseStream| {
        let biased = if input.peek(kw::biased) && input.peek2(Token![;]) {
            input.parse::<kw::biased>()?;
            input.parse::<Token![;]>()?;
            true
        } else {
            false
        };
        let futs = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
        Ok((biased, futs))
    };
    let (biased, futs) = parser.parse2(rest)?;
    let n = futs.len();
    if n == 0 {
        return Ok(if is_try {
            quote! { ::core::result::Result::Ok(()) }
        } else {
            quote! { () }
        });
    }
    let ms = Span::mixed_site();
    let cx = syn::Ident::new("__weft_cx", ms);
    let skip = syn::Ident::new("__weft_skip", ms);
    let futs_id = syn::Ident::new("__weft_futs", ms);
    // All futures in one tuple (one `let`: a `let` per future nests a scope per future, see
    // select.rs), then shadowed by a `&mut` to it: the tuple can never be moved again, so its
    // fields may be pinned in place (the enclosing future is pinned while it is polled). The
    // `move` closure then holds one reference and the rotation counter, which keeps the
    // `join!` future as small as tokio's.
    let exprs = futs.iter().map(|e| {
        quote! { #krate::macros::support::MaybeDone::new(::core::future::IntoFuture::into_future(#e)) }
    });
    let lets = quote! {
        let mut #futs_id = (#(#exprs,)*);
        let #futs_id = &mut #futs_id;
    };
    let pinned = |i: usize| {
        let idx = syn::Index::from(i);
        // SAFETY (generated code): the tuple is only reachable through the shadowing `&mut`,
        // so it is never moved after this first pin.
        quote! { unsafe { ::core::pin::Pin::new_unchecked(&mut #futs_id.#idx) } }
    };
    let poll_one = |i: usize| {
        let f = pinned(i);
        if is_try {
            quote! {
                let mut f = #f;
                if f.as_mut().poll_done(#cx) {
                    if let ::core::option::Option::Some(e) = f.as_mut().take_err() {
                        return ::core::task::Poll::Ready(::core::result::Result::Err(e));
                    }
                } else {
                    all_done = false;
                }
            }
        } else {
            quote! {
                if !#f.poll_done(#cx) {
                    all_done = false;
                }
            }
        }
    };
    let arms = (0..n).map(|i| {
        let body = poll_one(i);
        quote! { #i => { #body } }
    });
    let takes = (0..n).map(|i| {
        let f = pinned(i);
        if is_try {
            quote! { #f.take_ok() }
        } else {
            quote! { #f.take_output() }
        }
    });
    let result = if is_try {
        quote! { ::core::result::Result::Ok((#(#takes,)*)) }
    } else {
        quote! { (#(#takes,)*) }
    };
    let (rotate, skip_let) = if biased {
        (quote! { let start = 0usize; }, quote! {})
    } else {
        (
            quote! {
                let start = #skip as usize;
                #skip = if #skip as usize + 1 == #n { 0 } else { #skip + 1 };
            },
            quote! { let mut #skip: u32 = 0; },
        )
    };
    Ok(quote! {{
        #lets
        #skip_let
        #[allow(unused_unsafe, clippy::undocumented_unsafe_blocks)]
        ::core::future::poll_fn(move |#cx: &mut ::core::task::Context<'_>| {
            ::core::task::ready!(#krate::macros::support::poll_budget_available(#cx));
            #rotate
            let mut all_done = true;
            for i in 0..#n {
                let mut index = start + i;
                if index >= #n {
                    index -= #n;
                }
                match index {
                    #(#arms)*
                    _ => ::core::unreachable!("join! index out of range"),
                }
            }
            if all_done {
                ::core::task::Poll::Ready(#result)
            } else {
                ::core::task::Poll::Pending
            }
        }).await
    }})
}
