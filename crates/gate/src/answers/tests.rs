use super::*;
use crate::text::{FORMAT_EN, FORMAT_ZH};

/// The markers a reply leaves missing, spelled with their English labels for readable failures.
fn missing(reply: &str) -> Vec<&'static str> {
    missing_answers(reply).iter().map(Marker::en).collect()
}

const ALL: [&str; 3] = ["blocker", "ruled_out", "best_path"];

#[track_caller]
fn lifts(reply: &str) {
    assert_eq!(missing(reply), Vec::<&str>::new(), "{reply}");
}

#[track_caller]
fn misses(reply: &str, expected: &[&str]) {
    assert_eq!(missing(reply), expected, "{reply}");
}

#[test]
fn chinese_answers_on_one_line_or_several() {
    lifts("卡点=测试在 CI 上超时 排除=不是缓存问题 性价比=先本地复现超时");
    lifts("卡点=测试在 CI 上超时，排除=不是缓存问题；性价比=先本地复现超时。");
    lifts(
        "我停下来检查一下。\n卡点=测试在 CI 上超时\n排除=不是缓存问题\n性价比=先本地复现超时\n接下来按这个做。",
    );
}

#[test]
fn english_answers_any_case_and_label_spelling() {
    lifts("blocker=the CI test times out ruled_out=the cache best_path=reproduce locally");
    lifts("Blocker: the CI test times out\nRuled out: the cache\nBest path: reproduce locally");
    lifts("BLOCKER=the CI test\nRULED-OUT=the cache\nBEST-PATH=reproduce locally");
    lifts("blocker=the CI test\nexcluded=the cache\ncost-effective: reproduce locally");
    lifts("blocker=the CI test\nruled_out=the cache\nCost effective = reproduce locally");
}

#[test]
fn mixed_languages_in_one_reply() {
    lifts("卡点=the CI test times out\nruled_out=缓存不是原因\n性价比=reproduce locally");
}

#[test]
fn full_width_and_ascii_separators() {
    lifts("卡点＝测试超时 排除＝缓存问题 性价比＝本地复现");
    lifts("卡点：测试超时\n排除：缓存问题\n性价比：本地复现");
    lifts("卡点 = 测试超时\n排除 : 缓存问题\n性价比 ：本地复现");
    // A label followed by anything else is not a marker.
    misses("卡点 测试超时\n排除 缓存问题\n性价比 本地复现", &ALL);
}

#[test]
fn markdown_list_heading_and_emphasis_decoration() {
    lifts("- 卡点=测试超时\n- 排除=缓存问题\n- 性价比=本地复现");
    lifts("* blocker: the CI test\n* ruled_out: the cache\n* best_path: reproduce locally");
    lifts("1. 卡点=测试超时\n2. 排除=缓存问题\n3. 性价比=本地复现");
    lifts("1) 卡点=测试超时\n2) 排除=缓存问题\n3) 性价比=本地复现");
    lifts("1、卡点=测试超时\n2、排除=缓存问题\n3、性价比=本地复现");
    lifts("**卡点**=测试超时\n**排除**=缓存问题\n**性价比**=本地复现");
    lifts(
        "- **Blocker:** the CI test\n- **Ruled out:** the cache\n- **Best path:** reproduce locally",
    );
    lifts("__blocker__ = the CI test\n**ruled_out=** the cache\n*best_path*: reproduce locally");
    lifts("### 卡点：测试超时\n### 排除：缓存问题\n### 性价比：本地复现");
    lifts("  - 卡点=测试超时\n    - 排除=缓存问题\n\t- 性价比=本地复现");
}

#[test]
fn an_empty_marker_line_takes_the_next_line() {
    lifts("**卡点**：\n测试在 CI 上超时\n**排除**：\n缓存问题\n**性价比**：\n本地复现");
    // Not when the next line is blank or is itself a marker line.
    misses(
        "卡点=\n\n测试超时\n排除=缓存问题\n性价比=本地复现",
        &["blocker"],
    );
    misses("卡点=\n排除=缓存问题\n性价比=本地复现", &["blocker"]);
}

#[test]
fn quoted_lines_do_not_count() {
    misses("> 卡点=测试超时\n> 排除=缓存问题\n> 性价比=本地复现", &ALL);
    misses(
        "  > blocker=the CI test\n>ruled_out=the cache\n> > best_path=locally",
        &ALL,
    );
    misses(
        "> 卡点=测试超时\n排除=缓存问题\n性价比=本地复现",
        &["blocker"],
    );
}

#[test]
fn fenced_lines_do_not_count() {
    misses(
        "```\n卡点=测试超时\n排除=缓存问题\n性价比=本地复现\n```",
        &ALL,
    );
    misses(
        "~~~text\nblocker=the CI test\nruled_out=the cache\nbest_path=locally\n~~~",
        &ALL,
    );
    // A shorter or different fence does not close; an unclosed fence runs to the end.
    misses(
        "````\n卡点=测试超时\n```\n排除=缓存问题\n~~~\n性价比=本地复现",
        &ALL,
    );
    // After the fence closes, answers count again.
    misses(
        "```\n卡点=测试超时\n```\n排除=缓存问题\n性价比=本地复现",
        &["blocker"],
    );
    lifts("```\nexample\n```\n卡点=测试超时\n排除=缓存问题\n性价比=本地复现");
}

#[test]
fn indented_code_blocks_do_not_count() {
    misses(
        "The format is:\n\n    卡点=测试超时\n    排除=缓存问题\n    性价比=本地复现",
        &ALL,
    );
    misses(
        "\tblocker=the CI test\n\truled_out=the cache\n\nbest_path=reproduce locally",
        &["blocker", "ruled_out"],
    );
    // Indented lines that continue a paragraph or a list item are text, not code.
    lifts("卡点=测试超时\n    排除=缓存问题\n    性价比=本地复现");
    lifts("- 卡点=测试超时\n\n    排除=缓存问题\n    性价比=本地复现");
}

#[test]
fn html_comments_do_not_count() {
    misses("<!-- 卡点=测试超时 排除=缓存问题 性价比=本地复现 -->", &ALL);
    misses(
        "<!--\nblocker=the CI test\nruled_out=the cache\n-->\nbest_path=reproduce locally",
        &["blocker", "ruled_out"],
    );
    // An unclosed comment runs to the end.
    misses("<!--\n卡点=测试超时\n排除=缓存问题\n性价比=本地复现", &ALL);
    lifts("<!-- draft -->\n卡点=测试超时\n排除=缓存问题\n性价比=本地复现");
}

#[test]
fn a_quote_inside_a_list_item_does_not_count() {
    misses(
        "- > 卡点=测试超时\n- > 排除=缓存问题\n- > 性价比=本地复现",
        &ALL,
    );
    misses(
        "1. > blocker=the CI test\n2. ruled_out=the cache\n3. best_path=locally",
        &["blocker"],
    );
}

#[test]
fn inline_code_does_not_count() {
    misses(
        "Format: `卡点=测试超时` `排除=缓存问题` `性价比=本地复现`",
        &ALL,
    );
}

#[test]
fn placeholders_and_the_template_do_not_count() {
    for reply in [
        FORMAT_ZH,
        FORMAT_EN,
        "卡点=... 排除=... 性价比=...",
        "卡点=TBD 排除=todo 性价比=N/A",
        "卡点=<...> 排除=<排除了什么> 性价比={path}",
        "blocker=<the blocker> ruled_out=[...] best_path=【待填】",
        "blocker=xxx ruled_out=XXXX best_path=x",
        "卡点=待定 排除=无 性价比=同上",
        "卡点=??? 排除=—— 性价比=……",
        "blocker=none ruled_out=unknown best_path=nothing",
        "卡点=卡点 排除=排除 性价比=性价比",
        "blocker=Is this blocker still the most critical one to solve?\nruled_out=What did the last \
         negative result actually rule out?\nbest_path=Which path is the most cost-effective (not \
         necessarily the cheapest)?",
        "卡点=这个卡点仍然是当前最关键的吗？ 排除=上一次的负面结果实际排除了什么？ \
         性价比=哪条路径性价比最高（不一定是最便宜的）？",
    ] {
        misses(reply, &ALL);
    }
}

#[test]
fn the_check_blocks_themselves_do_not_lift() {
    let s = crate::Settings::default();
    let trigger = crate::Trigger {
        counting: s.counting(),
        failures: Some(2),
        repeats: Some(2),
        cycle: false,
    };
    let tools: Vec<&str> = s.allowlist().iter().map(|p| p.source()).collect();
    for lang in [crate::Language::Zh, crate::Language::En] {
        let block = crate::text::check_block(lang, trigger, &tools);
        misses(&block, &ALL);
        let denial = crate::text::pending_denial(lang, "bash", MarkerSet::ALL, &tools);
        misses(&denial, &ALL);
    }
}

#[test]
fn empty_and_too_short_answers_do_not_count() {
    misses("卡点= 排除= 性价比=", &ALL);
    misses("卡点=\t排除=　性价比=", &ALL);
    misses("blocker=ok ruled_out=a best_path=go", &ALL);
    // `DNS` (3) and `缓存` (2 Han characters) are long enough.
    lifts("blocker=DNS ruled_out=缓存 best_path=ping");
}

#[test]
fn partial_answers_name_what_is_missing() {
    misses("卡点=测试超时\n排除=缓存问题", &["best_path"]);
    misses("blocker=the CI test", &["ruled_out", "best_path"]);
    misses("Let me think about this differently.", &ALL);
    misses("", &ALL);
    misses("卡点=测试超时\n排除=缓存问题\n性价比=…", &["best_path"]);
}

#[test]
fn the_first_valid_answer_counts() {
    lifts("卡点=…\n卡点=测试超时\n排除=缓存问题\n性价比=本地复现");
    lifts("卡点=测试超时\n卡点=TBD\n排除=缓存问题\n性价比=本地复现");
}

#[test]
fn identical_answers_count_once() {
    misses(
        "卡点=测试超时 排除=测试超时 性价比=测试超时",
        &["ruled_out", "best_path"],
    );
    misses(
        "blocker=The test. ruled_out=the TEST best_path=reproduce locally",
        &["ruled_out"],
    );
}

#[test]
fn a_hypothesis_stands_in_for_what_was_ruled_out() {
    misses(
        "卡点=测试超时\n排除=不知道\n性价比=本地复现",
        &["ruled_out"],
    );
    lifts("卡点=测试超时\n排除=不知道\n假设=超时来自 DNS 解析，换成 IP 后应消失\n性价比=本地复现");
    lifts(
        "blocker=the CI test\nhypothesis=the timeout is DNS; with an IP it goes away\nbest_path=try the IP",
    );
    // A placeholder hypothesis does not.
    misses("卡点=测试超时\n假设=…\n性价比=本地复现", &["ruled_out"]);
}

#[test]
fn labels_inside_words_or_sentences_are_not_markers() {
    misses("卡点不在这里=测试 排除法=缓存 性价比高=本地", &ALL);
    misses(
        "blockers=the CI test\nruled_outs=x\nbest_paths=locally",
        &ALL,
    );
    misses(
        "unblocker=the CI test\nnot_excluded=cache\nmy_best_path=locally",
        &ALL,
    );
    misses(
        "blocker_old=the CI test\nexcluded_set=cache\nbest_path_b=locally",
        &ALL,
    );
    misses("ruled  out=the cache", &ALL);
    // The answer runs to the next marker only: a label in running text does not start one.
    lifts("卡点=没法排除缓存 排除=网络 性价比=本地复现");
}

#[test]
fn marker_sets_behave_as_sets() {
    let set = MarkerSet::EMPTY
        .with(Marker::BestPath)
        .with(Marker::Blocker);
    assert_eq!(set.len(), 2);
    assert!(set.contains(Marker::Blocker) && !set.contains(Marker::RuledOut));
    assert_eq!(
        set.iter().collect::<Vec<_>>(),
        [Marker::Blocker, Marker::BestPath]
    );
    assert_eq!(
        MarkerSet::ALL.without(set),
        MarkerSet::EMPTY.with(Marker::RuledOut)
    );
    assert_eq!(format!("{set:?}"), "{Blocker, BestPath}");
    assert!(MarkerSet::default().is_empty());
    assert_eq!(
        Marker::ALL.into_iter().collect::<MarkerSet>(),
        MarkerSet::ALL
    );
}

#[test]
fn windows_line_endings_are_fine() {
    lifts("卡点=测试超时\r\n排除=缓存问题\r\n性价比=本地复现\r\n");
}
