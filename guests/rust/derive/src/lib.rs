//! Procedural macros of `skillhost-guest`'s typed layer (the `typed`
//! feature); use them through that crate:
//!
//! - `#[derive(JsonSchema)]` writes the JSON Schema of a struct with named
//!   fields (an object) or of an enum of unit variants (a string enum),
//!   reading the serde attributes that change the JSON (`rename`,
//!   `rename_all`, `default`, `deny_unknown_fields`) and the doc comments
//!   (descriptions), so the schema says what serde reads and writes.
//! - `#[tool]` on `fn name(input: In) -> Result<Out, Error>` exports it as
//!   the Wasm function `name` and describes it for `describe!`.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{
    parse_macro_input, Attribute, Data, DeriveInput, Error, Fields, FnArg, ItemFn, Lit, Meta, NestedMeta, PathArguments,
    ReturnType, Token, Type,
};

/// The doc comment of attrs, lines joined by spaces, trimmed.
fn docs(attrs: &[Attribute]) -> String {
    let mut lines = Vec::new();
    for a in attrs {
        if let Ok(Meta::NameValue(nv)) = a.parse_meta() {
            if nv.path.is_ident("doc") {
                if let Lit::Str(s) = nv.lit {
                    let line = s.value().trim().to_string();
                    if !line.is_empty() {
                        lines.push(line);
                    }
                }
            }
        }
    }
    lines.join(" ")
}

/// The `#[serde(...)]` items of attrs.
fn serde_items(attrs: &[Attribute]) -> Vec<NestedMeta> {
    let mut out = Vec::new();
    for a in attrs {
        if !a.path.is_ident("serde") {
            continue;
        }
        if let Ok(Meta::List(list)) = a.parse_meta() {
            out.extend(list.nested.into_iter());
        }
    }
    out
}

/// The string value of `#[serde(key = "...")]`, if any.
fn serde_str(attrs: &[Attribute], key: &str) -> Option<String> {
    serde_items(attrs).into_iter().find_map(|m| match m {
        NestedMeta::Meta(Meta::NameValue(nv)) if nv.path.is_ident(key) => match nv.lit {
            Lit::Str(s) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// Whether `#[serde(flag)]` is present, as a word or as `flag = "..."`.
fn serde_flag(attrs: &[Attribute], flag: &str) -> bool {
    serde_items(attrs).into_iter().any(|m| match m {
        NestedMeta::Meta(Meta::Path(p)) => p.is_ident(flag),
        NestedMeta::Meta(Meta::NameValue(nv)) => nv.path.is_ident(flag),
        _ => false,
    })
}

/// Applies a serde `rename_all` rule to a Rust name (snake_case for
/// fields, PascalCase for variants).
fn rename(rule: &str, name: &str, span: Span) -> Result<String, Error> {
    let words: Vec<String> = {
        let mut w = Vec::new();
        let mut cur = String::new();
        for c in name.chars() {
            if c == '_' {
                if !cur.is_empty() {
                    w.push(std::mem::take(&mut cur));
                }
            } else if c.is_uppercase() && !cur.is_empty() {
                w.push(std::mem::take(&mut cur));
                cur.extend(c.to_lowercase());
            } else {
                cur.extend(c.to_lowercase());
            }
        }
        if !cur.is_empty() {
            w.push(cur);
        }
        w
    };
    let cap = |s: &str| {
        let mut c = s.chars();
        match c.next() {
            Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
            None => String::new(),
        }
    };
    Ok(match rule {
        "lowercase" => name.to_lowercase(),
        "UPPERCASE" => name.to_uppercase(),
        "snake_case" => words.join("_"),
        "SCREAMING_SNAKE_CASE" => words.join("_").to_uppercase(),
        "kebab-case" => words.join("-"),
        "SCREAMING-KEBAB-CASE" => words.join("-").to_uppercase(),
        "camelCase" => {
            let mut s = words.first().cloned().unwrap_or_default();
            for w in words.iter().skip(1) {
                s += &cap(w);
            }
            s
        }
        "PascalCase" => words.iter().map(|w| cap(w)).collect(),
        other => return Err(Error::new(span, format!("JsonSchema: unknown rename_all rule {:?}", other))),
    })
}

/// Whether ty is `Option<...>`.
fn is_option(ty: &Type) -> bool {
    if let Type::Path(p) = ty {
        if let Some(seg) = p.path.segments.last() {
            return seg.ident == "Option" && matches!(seg.arguments, PathArguments::AngleBracketed(_));
        }
    }
    false
}

/// `#[derive(JsonSchema)]`: the JSON Schema of a struct with named fields
/// or an enum of unit variants. A field is required unless it is an
/// `Option` or has `#[serde(default)]` (or the struct has). Doc comments
/// become descriptions. Tuple structs, unit structs and enums with data
/// are refused at compile time, naming the type.
#[proc_macro_derive(JsonSchema, attributes(serde))]
pub fn derive_json_schema(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match schema_impl(&input) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn schema_impl(input: &DeriveInput) -> Result<TokenStream2, Error> {
    let name = &input.ident;
    let (impl_g, ty_g, where_g) = input.generics.split_for_impl();
    let desc = docs(&input.attrs);
    let desc_stmt = if desc.is_empty() {
        quote! {}
    } else {
        quote! { s.insert("description".to_string(), ::skillhost_guest::typed::serde_json::Value::from(#desc)); }
    };
    let body = match &input.data {
        Data::Struct(st) => {
            let fields = match &st.fields {
                Fields::Named(f) => &f.named,
                _ => {
                    return Err(Error::new_spanned(
                        name,
                        format!("JsonSchema: {} must have named fields: a tool's input and output are JSON objects", name),
                    ))
                }
            };
            let rule = serde_str(&input.attrs, "rename_all");
            let all_default = serde_flag(&input.attrs, "default");
            let deny = serde_flag(&input.attrs, "deny_unknown_fields");
            let mut props = Vec::new();
            for f in fields {
                if serde_flag(&f.attrs, "skip") || serde_flag(&f.attrs, "skip_deserializing") && serde_flag(&f.attrs, "skip_serializing") {
                    continue;
                }
                if serde_flag(&f.attrs, "flatten") {
                    return Err(Error::new_spanned(f, "JsonSchema: #[serde(flatten)] is not supported; write the fields out"));
                }
                let ident = f.ident.as_ref().expect("named field");
                let raw = ident.to_string();
                let raw = raw.strip_prefix("r#").unwrap_or(&raw).to_string();
                let key = match (serde_str(&f.attrs, "rename"), &rule) {
                    (Some(r), _) => r,
                    (None, Some(rule)) => rename(rule, &raw, Span::call_site())?,
                    (None, None) => raw,
                };
                let ty = &f.ty;
                let fdesc = docs(&f.attrs);
                let required = !is_option(ty) && !all_default && !serde_flag(&f.attrs, "default");
                props.push(quote! {
                    {
                        let mut fs = <#ty as ::skillhost_guest::typed::JsonSchema>::json_schema();
                        if !#fdesc.is_empty() {
                            if let Some(o) = fs.as_object_mut() {
                                o.insert("description".to_string(), ::skillhost_guest::typed::serde_json::Value::from(#fdesc));
                            }
                        }
                        props.insert(#key.to_string(), fs);
                        if #required {
                            required.push(::skillhost_guest::typed::serde_json::Value::from(#key));
                        }
                    }
                });
            }
            let additional = if deny {
                quote! { s.insert("additionalProperties".to_string(), ::skillhost_guest::typed::serde_json::Value::Bool(false)); }
            } else {
                quote! {}
            };
            quote! {
                let mut s = ::skillhost_guest::typed::serde_json::Map::new();
                s.insert("type".to_string(), ::skillhost_guest::typed::serde_json::Value::from("object"));
                #desc_stmt
                let mut props = ::skillhost_guest::typed::serde_json::Map::new();
                let mut required: Vec<::skillhost_guest::typed::serde_json::Value> = Vec::new();
                #(#props)*
                s.insert("properties".to_string(), ::skillhost_guest::typed::serde_json::Value::Object(props));
                if !required.is_empty() {
                    s.insert("required".to_string(), ::skillhost_guest::typed::serde_json::Value::Array(required));
                }
                #additional
                ::skillhost_guest::typed::serde_json::Value::Object(s)
            }
        }
        Data::Enum(en) => {
            let rule = serde_str(&input.attrs, "rename_all");
            let mut names = Vec::new();
            for v in &en.variants {
                if !matches!(v.fields, Fields::Unit) {
                    return Err(Error::new_spanned(
                        v,
                        format!("JsonSchema: variant {}::{} holds data; only enums of unit variants (JSON strings) are supported", name, v.ident),
                    ));
                }
                if serde_flag(&v.attrs, "skip") {
                    continue;
                }
                let raw = v.ident.to_string();
                names.push(match (serde_str(&v.attrs, "rename"), &rule) {
                    (Some(r), _) => r,
                    (None, Some(rule)) => rename(rule, &raw, v.ident.span())?,
                    (None, None) => raw,
                });
            }
            quote! {
                let mut s = ::skillhost_guest::typed::serde_json::Map::new();
                s.insert("type".to_string(), ::skillhost_guest::typed::serde_json::Value::from("string"));
                #desc_stmt
                s.insert("enum".to_string(), ::skillhost_guest::typed::serde_json::Value::Array(
                    vec![#(::skillhost_guest::typed::serde_json::Value::from(#names)),*]));
                ::skillhost_guest::typed::serde_json::Value::Object(s)
            }
        }
        Data::Union(_) => return Err(Error::new_spanned(name, "JsonSchema: unions are not supported")),
    };
    Ok(quote! {
        impl #impl_g ::skillhost_guest::typed::JsonSchema for #name #ty_g #where_g {
            fn json_schema() -> ::skillhost_guest::typed::serde_json::Value {
                #body
            }
        }
    })
}

/// `#[tool]` (or `#[tool(idempotent, side_effects, requires_network,
/// requires_filesystem, category = "text", tags = "a,b")]`) on
/// `fn name(input: In) -> Result<Out, Error>`: the function stays as
/// written, a Wasm export of the same name runs it (decoding the input,
/// encoding the output or the error), and a hidden module of the same name
/// describes it for `describe!`. The tool's description is the function's
/// doc comment.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let func = parse_macro_input!(item as ItemFn);
    match tool_impl(args.into(), func) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn tool_impl(args: TokenStream2, func: ItemFn) -> Result<TokenStream2, Error> {
    let items = Punctuated::<NestedMeta, Token![,]>::parse_terminated.parse2(args)?;
    let (mut idempotent, mut side_effects, mut network, mut filesystem) = (false, false, false, false);
    let mut category = String::new();
    let mut tags: Vec<String> = Vec::new();
    for it in items {
        match it {
            NestedMeta::Meta(Meta::Path(p)) if p.is_ident("idempotent") => idempotent = true,
            NestedMeta::Meta(Meta::Path(p)) if p.is_ident("side_effects") => side_effects = true,
            NestedMeta::Meta(Meta::Path(p)) if p.is_ident("requires_network") => network = true,
            NestedMeta::Meta(Meta::Path(p)) if p.is_ident("requires_filesystem") => filesystem = true,
            NestedMeta::Meta(Meta::NameValue(nv)) if nv.path.is_ident("category") => match nv.lit {
                Lit::Str(s) => category = s.value(),
                other => return Err(Error::new_spanned(other, "tool: category is a string")),
            },
            NestedMeta::Meta(Meta::NameValue(nv)) if nv.path.is_ident("tags") => match nv.lit {
                Lit::Str(s) => tags = s.value().split(',').map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect(),
                other => return Err(Error::new_spanned(other, "tool: tags is a string of comma-separated tags")),
            },
            other => {
                return Err(Error::new_spanned(
                    other,
                    "tool: unknown setting; use idempotent, side_effects, requires_network, requires_filesystem, category = \"...\" or tags = \"a,b\"",
                ))
            }
        }
    }
    let sig = &func.sig;
    let name = &sig.ident;
    let shape = "a tool is fn name(input: In) -> Result<Out, Error>";
    if sig.inputs.len() != 1 {
        return Err(Error::new_spanned(&sig.inputs, format!("tool {}: takes one argument, the input; {}", name, shape)));
    }
    let input_ty = match sig.inputs.first() {
        Some(FnArg::Typed(pt)) => (*pt.ty).clone(),
        _ => return Err(Error::new_spanned(&sig.inputs, format!("tool {}: {}", name, shape))),
    };
    let output_ty = match &sig.output {
        ReturnType::Type(_, ty) => match &**ty {
            Type::Path(p) if p.path.segments.last().map(|s| s.ident == "Result").unwrap_or(false) => {
                match &p.path.segments.last().unwrap().arguments {
                    PathArguments::AngleBracketed(a) => match a.args.first() {
                        Some(syn::GenericArgument::Type(t)) => t.clone(),
                        _ => return Err(Error::new_spanned(ty, format!("tool {}: {}", name, shape))),
                    },
                    _ => return Err(Error::new_spanned(ty, format!("tool {}: {}", name, shape))),
                }
            }
            _ => return Err(Error::new_spanned(ty, format!("tool {}: returns Result<Out, Error>; {}", name, shape))),
        },
        ReturnType::Default => return Err(Error::new_spanned(sig, format!("tool {}: returns nothing; {}", name, shape))),
    };
    let desc = docs(&func.attrs);
    let tool_name = name.to_string();
    let tool_name = tool_name.strip_prefix("r#").unwrap_or(&tool_name).to_string();
    if tool_name == "describe" || tool_name.starts_with('_') {
        return Err(Error::new_spanned(name, format!("tool {}: the export name is reserved", tool_name)));
    }
    // A module of the tool's name holds what the export and describe!
    // need: modules and functions live in different namespaces.
    Ok(quote! {
        #func

        #[doc(hidden)]
        #[allow(non_snake_case)]
        pub mod #name {
            #[allow(unused_imports)]
            use super::*;

            #[cfg(target_arch = "wasm32")]
            #[export_name = #tool_name]
            pub extern "C" fn __skillhost_export() -> i32 {
                ::skillhost_guest::typed::run::<#input_ty, #output_ty, _>(super::#name)
            }

            pub fn __skillhost_info() -> ::skillhost_guest::typed::ToolInfo {
                ::skillhost_guest::typed::ToolInfo {
                    name: #tool_name,
                    description: #desc,
                    input_schema: <#input_ty as ::skillhost_guest::typed::JsonSchema>::json_schema(),
                    output_schema: <#output_ty as ::skillhost_guest::typed::JsonSchema>::json_schema(),
                    category: #category,
                    tags: &[#(#tags),*],
                    idempotent: #idempotent,
                    side_effects: #side_effects,
                    requires_network: #network,
                    requires_filesystem: #filesystem,
                    invoke: |input: &[u8]| ::skillhost_guest::typed::invoke_bytes::<#input_ty, #output_ty, _>(super::#name, input),
                }
            }
        }
    })
}
