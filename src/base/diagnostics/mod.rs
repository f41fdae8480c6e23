//! What a run tells people besides its figures: the errors it can end with and their exit
//! codes (`error`), and the warnings and notes on stderr that the result also records
//! (`warnings`). Never on stdout, which belongs to the report.

pub mod error;
pub mod warnings;
