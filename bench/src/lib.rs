//! The benches' shared library: [`report`] (the report's merging, goals, budgets and table).

pub mod report;
