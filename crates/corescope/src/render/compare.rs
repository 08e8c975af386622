//! `corescope compare`'s renderers: the terminal tables ([`render_text`],
//! `compare_text.rs`) and the HTML page ([`render_html`], `compare_html.rs`) of the
//! comparison model in `crate::compare`; what both share is in `compare_view.rs`.

pub use super::compare_html::render_html;
pub use super::compare_text::{render_text, render_text_width};
