//! `#[derive(Trace)]` and `#[derive(Object)]` for [respawn-gc](https://docs.rs/respawn-gc).
//!
//! `Trace` visits every field (of every variant) unless the field is marked
//! `#[trace(skip)]`; `NEEDS_TRACE` is the OR of the traced fields' `NEEDS_TRACE`, so a type
//! whose fields hold no handle is never scanned. Each type parameter gets a `Trace` bound.
//! `Object` is an empty impl: the lifecycle hooks keep their no-op defaults.
//!
//! The generated code names the collector as `::respawn_gc`, or `::respawn::gc` when the
//! crate being compiled depends on the `respawn` facade instead.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use proc_macro_crate::{crate_name, FoundCrate};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{parse_macro_input, parse_quote, Data, DeriveInput, Field, Fields, Ident};

/// Derives `respawn_gc::Trace`. See the crate docs.
#[proc_macro_derive(Trace, attributes(trace))]
pub fn derive_trace(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand_trace(input).unwrap_or_else(syn::Error::into_compile_error).into()
}

/// Derives `respawn_gc::Object` with the default (no-op) lifecycle hooks.
#[proc_macro_derive(Object)]
pub fn derive_object(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let gc = gc_path();
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause.cloned().unwrap_or_else(|| parse_quote!(where));
    where_clause
        .predicates
        .push(parse_quote!(Self: #gc::Trace + ::core::marker::Send + ::core::marker::Sync + 'static));
    quote!(impl #impl_generics #gc::Object for #name #ty_generics #where_clause {}).into()
}

/// The path of the collector crate as the deriving crate sees it.
fn gc_path() -> TokenStream2 {
    match crate_name("respawn-gc") {
        // `Itself` also covers respawn-gc's own tests and examples, where the library is an
        // extern crate named `respawn_gc` (the library declares `extern crate self as
        // respawn_gc` for its own modules).
        Ok(FoundCrate::Itself) => quote!(::respawn_gc),
        Ok(FoundCrate::Name(name)) => {
            let name = Ident::new(&name, Span::call_site());
            quote!(::#name)
        }
        Err(_) => match crate_name("respawn") {
            Ok(FoundCrate::Name(name)) => {
                let name = Ident::new(&name, Span::call_site());
                quote!(::#name::gc)
            }
            _ => quote!(::respawn::gc),
        },
    }
}

/// Whether a field carries `#[trace(skip)]`; any other `trace` argument is an error.
fn skipped(field: &Field) -> syn::Result<bool> {
    let mut skip = false;
    for attr in field.attrs.iter().filter(|a| a.path().is_ident("trace")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                skip = true;
                Ok(())
            } else {
                Err(meta.error("unknown trace attribute; the only one is #[trace(skip)]"))
            }
        })?;
    }
    Ok(skip)
}

/// The bindings of a variant's (or struct's) fields, the pattern that binds them, and the
/// traced ones with their types.
struct Bound {
    pattern: TokenStream2,
    traced: Vec<(Ident, syn::Type)>,
}

fn bind(path: TokenStream2, fields: &Fields) -> syn::Result<Bound> {
    let mut traced = Vec::new();
    let mut names = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let binding = if skipped(field)? {
            quote!(_)
        } else {
            let name = format_ident!("__field{}", i, span = field.span());
            traced.push((name.clone(), field.ty.clone()));
            quote!(#name)
        };
        names.push((field.ident.clone(), binding));
    }
    let pattern = match fields {
        Fields::Named(_) => {
            let binds = names.iter().map(|(ident, binding)| quote!(#ident: #binding));
            quote!(#path { #(#binds),* })
        }
        Fields::Unnamed(_) => {
            let binds = names.iter().map(|(_, binding)| binding);
            quote!(#path ( #(#binds),* ))
        }
        Fields::Unit => quote!(#path),
    };
    Ok(Bound { pattern, traced })
}

fn expand_trace(mut input: DeriveInput) -> syn::Result<TokenStream2> {
    let gc = gc_path();
    let name = input.ident.clone();
    let arms: Vec<Bound> = match &input.data {
        Data::Struct(s) => vec![bind(quote!(Self), &s.fields)?],
        Data::Enum(e) => e
            .variants
            .iter()
            .map(|v| {
                let ident = &v.ident;
                bind(quote!(Self::#ident), &v.fields)
            })
            .collect::<syn::Result<_>>()?,
        Data::Union(u) => {
            return Err(syn::Error::new(u.union_token.span(), "Trace cannot be derived for unions"));
        }
    };
    for param in input.generics.type_params_mut() {
        param.bounds.push(parse_quote!(#gc::Trace));
    }
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();

    let needs = arms.iter().flat_map(|arm| &arm.traced).map(|(_, ty)| quote!(<#ty as #gc::Trace>::NEEDS_TRACE));
    let match_arms = arms.iter().map(|arm| {
        let pattern = &arm.pattern;
        let visits = arm.traced.iter().map(|(binding, _)| quote!(tracer.trace(#binding);));
        quote!(#pattern => { #(#visits)* })
    });
    let prefetch_arms = arms.iter().map(|arm| {
        let pattern = &arm.pattern;
        let visits = arm.traced.iter().map(|(binding, _)| quote!(#gc::Trace::prefetch(#binding, tracer);));
        quote!(#pattern => { #(#visits)* })
    });
    let (body, prefetch) = if arms.is_empty() {
        // An enum without variants has no value to trace.
        (quote!(match *self {}), quote!(match *self {}))
    } else {
        (quote!(match self { #(#match_arms)* }), quote!(match self { #(#prefetch_arms)* }))
    };
    Ok(quote! {
        // SAFETY: the derive visits every field that is not `#[trace(skip)]`, in every
        // variant, and `NEEDS_TRACE` is true whenever one of those fields needs tracing.
        // (`prefetch` only passes the hint on to the same fields.)
        unsafe impl #impl_generics #gc::Trace for #name #ty_generics #where_clause {
            const NEEDS_TRACE: bool = false #(|| #needs)*;

            #[inline]
            fn trace(&self, tracer: &mut #gc::Tracer<'_>) {
                // Types without traced fields never touch the tracer.
                let _ = &tracer;
                #body
            }

            #[inline]
            fn prefetch(&self, tracer: &#gc::Tracer<'_>) {
                let _ = &tracer;
                #prefetch
            }
        }
    })
}
