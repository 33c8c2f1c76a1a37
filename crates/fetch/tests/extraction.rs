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

#[test]
fn wcxb_article_keeps_the_post_without_the_site_around_it() {
    check(
        "wcxb-article-0488.html",
        expect_file!["pages/wcxb-article-0488.txt"],
    );
}

#[test]
fn wcxb_forum_keeps_every_comment_of_the_thread() {
    check(
        "wcxb-forum-0575.html",
        expect_file!["pages/wcxb-forum-0575.txt"],
    );
}

#[test]
fn wcxb_listing_keeps_the_list_of_items() {
    check(
        "wcxb-listing-2911.html",
        expect_file!["pages/wcxb-listing-2911.txt"],
    );
}

#[test]
fn wcxb_service_page_keeps_all_its_sections() {
    check(
        "wcxb-service-4855.html",
        expect_file!["pages/wcxb-service-4855.txt"],
    );
}

#[test]
fn wcxb_product_page_keeps_the_description() {
    check(
        "wcxb-product-4897.html",
        expect_file!["pages/wcxb-product-4897.txt"],
    );
}

#[test]
fn wcxb_collection_keeps_the_collection() {
    check(
        "wcxb-collection-4207.html",
        expect_file!["pages/wcxb-collection-4207.txt"],
    );
}

#[test]
fn wcxb_documentation_keeps_the_guide() {
    check(
        "wcxb-documentation-4412.html",
        expect_file!["pages/wcxb-documentation-4412.txt"],
    );
}

#[test]
fn hidden_text_and_invisible_characters_never_reach_the_text() {
    check(
        "hidden-injection.html",
        expect_file!["pages/hidden-injection.txt"],
    );
}

#[test]
fn an_unsure_extraction_is_the_page_text() {
    check(
        "unsure-advertisement.html",
        expect_file!["pages/unsure-advertisement.txt"],
    );
}
