//! Prints hit@1, hit@3 and MRR per category and overall for the labelled recall set in
//! `recall/`, then every question whose fact was not ranked first.
//!
//! `cargo run --release -p limit-break-memory --example recall_bench`

use limit_break_memory::{Index, Store, eval};

fn main() {
    let facts = include_str!("../recall/facts.json");
    let questions = include_str!("../recall/questions.json");
    let store = match Store::parse(facts) {
        Ok(s) => s,
        Err(f) => {
            eprintln!("recall/facts.json: {f}");
            std::process::exit(1);
        }
    };
    let questions = match eval::parse_questions(questions) {
        Ok(q) => q,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    println!(
        "{} facts, {} questions\n",
        store.facts.len(),
        questions.len()
    );
    let baseline = Index::build_keyword_only(store.clone());
    let index = Index::build(store);
    println!("with the concept table:");
    print!("{}", eval::report(&eval::evaluate(&index, &questions)));
    println!("\nbaseline, keyword-only (no concept table):");
    let (rows, all) = eval::by_category(&eval::evaluate(&baseline, &questions));
    for (c, s) in rows
        .iter()
        .chain(std::iter::once(&("overall".to_owned(), all)))
    {
        println!(
            "{:<12} {:>3}  {:>6.3}  {:>6.3}  {:>6.3}",
            c, s.n, s.hit1, s.hit3, s.mrr
        );
    }
}
