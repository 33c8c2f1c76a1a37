use super::*;
use crate::store::Fact;

const STORES: [&str; 5] = [
    "{}",
    r#"{"schema_version": 1, "facts": []}"#,
    r#"{"facts": [{"id": 7, "statement": "a \"quoted\"\nline", "tags": ["x"], "extra": {"a": [1, {"b": []}], "c": {}}}], "notes": {"k": [true, null]}, "more": "é"}"#,
    r#"{"schema_version": "1", "facts": [{"id": "a"}, {"id": "a", "value": 1.50, "unit": 12345678901234567890123}], "z": []}"#,
    r#"{"schema_version": 1, "facts": [{"id": "数据.库", "details": "\ud83d\ude00 ☃"}]}"#,
];

#[test]
fn a_whole_render_is_the_store_text() {
    for text in STORES {
        let store = Store::parse(text).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(Rendered::of(&store).text, store.to_text(), "{text}");
    }
}

#[test]
fn an_edited_render_is_the_edited_store_text() {
    for text in STORES {
        let before = Store::parse(text).unwrap_or_else(|f| panic!("{f}"));
        let mut rendered = Rendered::of(&before);
        let mut after = before.clone();
        let mut changed = Vec::new();
        if let Some(first) = after.facts.first_mut() {
            first.statement = "replaced, longer than before".into();
            changed.push(0);
        }
        let appended = Fact {
            id: "new.one".into(),
            tags: vec!["t".into()],
            ..Fact::default()
        };
        changed.push(after.facts.len());
        after.facts.push(appended);
        rendered.edit(&after, &changed);
        assert_eq!(rendered, Rendered::of(&after), "{text}");
        assert_eq!(rendered.text, after.to_text());
        // Shorter again, and two appends at once.
        after.facts[0].statement = "s".into();
        after.facts.push(Fact::default());
        after.facts.push(Fact::default());
        let n = after.facts.len();
        rendered.edit(&after, &[0, n - 2, n - 1]);
        assert_eq!(rendered, Rendered::of(&after), "{text}");
        // Edited with nothing changed, it stays the same text.
        rendered.edit(&after, &[]);
        assert_eq!(rendered.text, after.to_text());
    }
}
