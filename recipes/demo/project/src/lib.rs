//! Order totals for a small shop.

pub mod pricing;

pub use pricing::{order_total, Item};
