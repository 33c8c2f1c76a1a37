//! The three check questions, in Chinese and English. The check block asks them and the answer
//! detector refuses them as answers, so they sit below both `text` and `answers`.

/// The three questions, Chinese.
pub const QUESTIONS_ZH: [&str; 3] = [
    "这个卡点仍然是当前最关键的吗？",
    "上一次的负面结果实际排除了什么？",
    "哪条路径性价比最高（不一定是最便宜的）？",
];

/// The three questions, English.
pub const QUESTIONS_EN: [&str; 3] = [
    "Is this blocker still the most critical one to solve?",
    "What did the last negative result actually rule out?",
    "Which path is the most cost-effective (not necessarily the cheapest)?",
];
