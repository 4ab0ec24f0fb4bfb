//! `select!`: parse the branches and generate one poll loop over all of them.
//!
//! Input (after the `($crate)` group): `[biased;] (pattern = future [, if condition] =>
//! handler[,])* [else => expression[,]]`. The generated code, for N branches:
//! 1. evaluates every precondition, then every future expression (disabled ones too, as
//!    tokio documents), each pinned on the stack of the `select!` expression;
//! 2. polls the enabled ones from a random start index (index 0 with `biased;`) inside one
//!    `poll_fn`, after checking the task's coop budget; a completed branch is disabled, and
//!    its value is returned only if it matches the branch's pattern (checked by reference,
//!    with binding modes stripped so the check never moves the value);
//! 3. drops every future (the losers are cancelled), then matches the value against the
//!    branch's pattern again, for real, and runs the handler. With every branch disabled it
//!    runs `else`, or panics like tokio when there is none.
//!
//! The disabled set is an array of `bool`, not a 64-bit mask, so the branch count has no
//! fixed cap (tokio's is 64); internal names use mixed-site hygiene so they cannot collide
//! with the user's.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::visit_mut::VisitMut;
use syn::{Expr, Pat, Token};

struct Branch {
    pat: Pat,
    fut: Expr,
    cond: Option<Expr>,
    handler: Expr,
}

struct Select {
    biased: bool,
    branches: Vec<Branch>,
    else_branch: Option<Expr>,
}

mod kw {
    syn::custom_keyword!(biased);
}

fn parse_handler(input: ParseStream) -> syn::Result<Expr> {
    if input.peek(syn::token::Brace) {
        // A block handler ends at its closing brace; the comma after it is optional.
        let block: syn::ExprBlock = input.parse()?;
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
        Ok(Expr::Block(block))
    } else {
        let expr: Expr = input.parse()?;
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
        Ok(expr)
    }
}

impl Parse for Select {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut select = Select { biased: false, branches: Vec::new(), else_branch: None };
        if input.peek(kw::biased) && input.peek2(Token![;]) {
            input.parse::<kw::biased>()?;
            input.parse::<Token![;]>()?;
            select.biased = true;
        }
        while !input.is_empty() {
            if input.peek(Token![else]) {
                let tok = input.parse::<Token![else]>()?;
                if select.else_branch.is_some() {
                    return Err(syn::Error::new(tok.span, "`select!` takes at most one `else` branch"));
                }
                input.parse::<Token![=>]>()?;
                select.else_branch = Some(parse_handler(input)?);
                continue;
            }
            let pat = Pat::parse_multi_with_leading_vert(input)?;
            input.parse::<Token![=]>()?;
            let fut: Expr = input.parse()?;
            let cond = if input.peek(Token![,]) && input.peek2(Token![if]) {
                input.parse::<Token![,]>()?;
                input.parse::<Token![if]>()?;
                Some(input.parse()?)
            } else {
                None
            };
            input.parse::<Token![=>]>()?;
            let handler = parse_handler(input)?;
            select.branches.push(Branch { pat, fut, cond, handler });
        }
        if select.branches.is_empty() && select.else_branch.is_none() {
            return Err(syn::Error::new(
                Span::call_site(),
                "`select!` needs at least one `pattern = future => handler` branch or an `else` branch",
            ));
        }
        Ok(select)
    }
}

/// Strips `ref`, `ref mut` and `mut` from bindings so the pattern can test a `&Output`
/// without moving out of it.
struct CleanPattern;

impl VisitMut for CleanPattern {
    fn visit_pat_ident_mut(&mut self, i: &mut syn::PatIdent) {
        i.by_ref = None;
        i.mutability = None;
        syn::visit_mut::visit_pat_ident_mut(self, i);
    }
}

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let (krate, rest) = crate::split_crate(input)?;
    let select: Select = syn::parse2(rest)?;
    let n = select.branches.len();
    if n == 0 {
        // Only `else` (tokio allows it): every branch is "disabled", so it runs at once.
        let e = select.else_branch.as_ref().expect("parse rejects a select! with neither");
        return Ok(quote! {{ #e }});
    }
    let ms = Span::mixed_site();
    let disabled = syn::Ident::new("__weft_disabled", ms);
    let winner = syn::Ident::new("__weft_winner", ms);
    let out = syn::Ident::new("__weft_out", ms);
    let cx = syn::Ident::new("__weft_cx", ms);
    let any_pending = syn::Ident::new("__weft_any_pending", ms);
    let start = syn::Ident::new("__weft_start", ms);
    let futs: Vec<_> = (0..n).map(|i| format_ident!("__weft_fut{}", i, span = ms)).collect();
    let slots: Vec<_> = (0..n).map(|i| format_ident!("__weft_slot{}", i, span = ms)).collect();

    let conds = select
        .branches
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.cond.as_ref().map(|c| quote! { if !(#c) { #disabled[#i] = true; } }));
    // One `let` for all futures (and one for all slots): a `let` per branch nests a scope
    // per branch, and rustc overflows its stack walking ~1,000 nested scopes. The raw
    // expressions are bound first, as a tuple: `let` extends the lifetime of temporaries
    // borrowed in a tuple operand, so `&mut std::future::ready(())` works as a branch future
    // (it would not inside a call to `into_future`).
    let raw = syn::Ident::new("__weft_raw", ms);
    let raw_exprs = select.branches.iter().map(|b| &b.fut);
    let fut_exprs = (0..n).map(|i| {
        let i = syn::Index::from(i);
        quote! { ::core::pin::pin!(::core::future::IntoFuture::into_future(#raw.#i)) }
    });
    let fut_lets = quote! {
        let #raw = (#(#raw_exprs,)*);
        let (#(mut #futs,)*) = (#(#fut_exprs,)*);
    };
    let poll_arms = select.branches.iter().enumerate().map(|(i, b)| {
        let f = &futs[i];
        let slot = &slots[i];
        let mut check = b.pat.clone();
        CleanPattern.visit_pat_mut(&mut check);
        quote! {
            #i => {
                if #disabled[#i] {
                    continue;
                }
                // The `continue` arm makes the match's type a diverging-coerced variable, so a
                // future whose output is otherwise unconstrained (`poll_fn(|_| panic!())` in a
                // disabled branch) falls back to `()` exactly as it does under tokio's select!.
                let #out = match ::core::future::Future::poll(#f.as_mut(), #cx) {
                    ::core::task::Poll::Ready(v) => v,
                    ::core::task::Poll::Pending => {
                        #any_pending = true;
                        continue;
                    }
                };
                #disabled[#i] = true;
                #[allow(unused_variables, unreachable_patterns, clippy::redundant_pattern_matching)]
                let matched = match &#out { #check => true, _ => false };
                if matched {
                    #slot = ::core::option::Option::Some(#out);
                    return ::core::task::Poll::Ready(#i);
                }
            }
        }
    });
    let handler_arms = select.branches.iter().enumerate().map(|(i, b)| {
        let slot = &slots[i];
        let pat = &b.pat;
        let h = &b.handler;
        quote! {
            #i => match #slot {
                ::core::option::Option::Some(#pat) => #h,
                #[allow(unreachable_patterns)]
                _ => ::core::unreachable!("select!: a value matched its pattern by reference but not by value"),
            },
        }
    });
    let else_arm = match &select.else_branch {
        Some(e) => quote! { _ => #e, },
        None => quote! { _ => ::core::panic!("all branches are disabled and there is no else branch"), },
    };
    let start_expr = if select.biased {
        quote! { 0usize }
    } else {
        quote! { #krate::macros::support::thread_rng_n(#n as u32) as usize }
    };
    let nones = slots.iter().map(|_| quote! { ::core::option::Option::None });
    // The winning value travels in a per-branch `Option` slot and the poll returns only the
    // branch index: one generic enum over every branch's output type would make type
    // inference quadratic in the branch count.
    Ok(quote! {{
        let mut #disabled = [false; #n];
        #(#conds)*
        let (#(mut #slots,)*) = (#(#nones,)*);
        let #winner: usize = {
            #fut_lets
            ::core::future::poll_fn(|#cx: &mut ::core::task::Context<'_>| {
                ::core::task::ready!(#krate::macros::support::poll_budget_available(#cx));
                let #start: usize = #start_expr;
                let mut #any_pending = false;
                for i in 0..#n {
                    let mut branch = #start + i;
                    if branch >= #n {
                        branch -= #n;
                    }
                    match branch {
                        #(#poll_arms)*
                        _ => ::core::unreachable!("select! branch index out of range"),
                    }
                }
                if #any_pending {
                    ::core::task::Poll::Pending
                } else {
                    ::core::task::Poll::Ready(#n)
                }
            }).await
        };
        match #winner {
            #(#handler_arms)*
            #else_arm
        }
    }})
}
