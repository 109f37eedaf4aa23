//! What the review view needs, as plain data and pure functions, so the TUI only renders and
//! the rules are tested without a terminal: side-by-side rows of a hunk, word-level highlights
//! inside changed lines, one model's file compared with another's and every model's version
//! of one hunk's lines, the basket of picked change sets / files / hunks (with conflicts from
//! [`crate::apply::compose`](fn@crate::apply::compose) marked before anything is written), blind-mode names, change sets
//! that touch test files and the model the review opens on (`rank`).

pub mod basket;
pub mod blind;
pub mod compare;
pub mod rank;
pub mod side;
pub mod syntax;
pub mod words;

pub use basket::{Basket, BasketState, changed_lines, line_place};
pub use blind::BlindNames;
pub use compare::{VersionColumn, VersionLine, compare_file, region_versions, same_version};
pub use rank::{CheckVerdict, Standing, best, is_test_path, test_files};
pub use side::{Cell, SideRow, side_by_side};
pub use syntax::{Lang, Token, tokens};
pub use words::{Highlight, word_highlights};
