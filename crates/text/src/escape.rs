//! Text escaping for the self-contained HTML pages the family draws (research-nudge's replay chart,
//! dsh-autoresearch's run picture): one rule for element content and attribute values alike.
//! A leaf.

/// `text` safe inside an element or a quoted attribute value: `&`, `<`, `>`, `"` and `'` become
/// entities, and a control character other than a line feed becomes a space (a page is read,
/// never executed; a line feed keeps `<pre>` blocks and tooltips multi-line).
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' => out.push('\n'),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_quotes_and_controls_are_neutralised() {
        assert_eq!(
            escape_html("<a href=\"x\" title='y'>&amp;</a>\u{1b}[31m\tend\nnext"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt; [31m end\nnext"
        );
        assert_eq!(escape_html("plain 中文"), "plain 中文");
    }
}
