//! The main-content text of the fixture pages in `tests/pages/` (see its README for where each
//! page comes from), pinned as snapshots.

use expect_test::{ExpectFile, expect_file};
use limit_break_fetch as fetch;

fn check(page: &str, expected: ExpectFile) {
    let path = format!("{}/tests/pages/{page}", env!("CARGO_MANIFEST_DIR"));
    let html = std::fs::read_to_string(&path).expect("fixture page");
    expected.assert_eq(&fetch::main_content::to_text(&html));
}

#[test]
fn sphinx_page_keeps_the_body_without_the_sidebar() {
    check(
        "sphinx-requests-support.html",
        expect_file!["pages/sphinx-requests-support.txt"],
    );
}

#[test]
fn docbook_page_keeps_its_table_of_contents_without_the_navigation() {
    check(
        "docbook-postgresql-spi-interface-support.html",
        expect_file!["pages/docbook-postgresql-spi-interface-support.txt"],
    );
}

#[test]
fn mdbook_page_keeps_the_chapter_without_the_book_outline() {
    check(
        "mdbook-rust-book-ownership.html",
        expect_file!["pages/mdbook-rust-book-ownership.txt"],
    );
}

#[test]
fn article_page_drops_banners_navigation_sidebar_and_footer() {
    check(
        "article-with-chrome.html",
        expect_file!["pages/article-with-chrome.txt"],
    );
}
