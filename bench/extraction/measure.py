"""Main-content extraction benchmark: which pages, their ground truth, trafilatura, the scores.

Run by `cargo xtask extraction` (never by hand-picked pages):
  measure.py pages ROOT MANIFEST        choose the pages and write the manifest
  measure.py score ROOT MANIFEST OUT    score the texts xtask wrote into OUT, print the table

Ground truth ("the main text") is each generator's own main container, named below by XPath
and applied here only (the extractor never sees these selectors), minus the generator's own
navigation blocks where the container is the whole body. Scores are over word tokens
(lowercased `\\w+` runs) as multisets: precision = shared / extracted, recall = shared / truth.
The tune split is what the extractor was tuned on; the report split was not looked at while
tuning.
"""

import collections
import json
import math
import os
import re
import statistics
import sys

import lxml.html
import trafilatura

# (source, generator, split, directory under ROOT, file pattern, truth container, excluded)
SOURCES = [
    ("python-requests-doc", "Sphinx (alabaster)", "tune", "usr/share/doc/python-requests-doc/html",
     r"\.html$", "//*[@role='main']", []),
    ("python-flask-doc", "Sphinx (pallets)", "tune", "usr/share/doc/python-flask-doc/html",
     r"\.html$", "//*[@role='main']", []),
    ("cmake-doc", "Sphinx (cmake)", "tune", "usr/share/doc/cmake-doc/html",
     r"\.html$", "//*[@role='main']", []),
    ("git-doc", "AsciiDoc", "tune", "usr/share/doc/git-doc",
     r"^[^/]+\.html$", "//body", ["//div[@id='footer']"]),
    ("postgresql-doc-15", "DocBook", "tune", "usr/share/doc/postgresql-doc-15/html",
     r"\.html$", "//body", ["//div[@class='navheader']", "//div[@class='navfooter']"]),
    ("rust-doc (std)", "rustdoc", "tune", "usr/share/doc/rust-doc/html/std",
     r"\.html$", "//section[@id='main-content']", []),
    ("rust-doc (book)", "mdBook", "report", "usr/share/doc/rust-doc/html/book",
     r"^ch.*\.html$", "//main", []),
    ("mkdocs-doc", "MkDocs", "report", "usr/share/doc/mkdocs/html",
     r"\.html$", "//*[@role='main']", []),
    ("nodejs-doc", "Node.js doctool", "report", "usr/share/doc/nodejs/api",
     r"^[^/]+\.html$", "//*[@id='apicontent']", []),
    ("libcommons-lang3-java-doc", "Javadoc", "report", "usr/share/doc/libcommons-lang3-java/api",
     r"^org/.*\.html$", "//main", []),
    ("sqlite3-doc", "SQLite's doc generator", "report", "usr/share/doc/sqlite3",
     r"^[^/]+\.html$", "//body", ["//div[contains(concat(' ', @class, ' '), ' nosearch ')]"]),
    ("libglib2.0-doc", "gtk-doc", "report", "usr/share/gtk-doc/html/glib",
     r"\.html$", "//body", ["//table[@class='navigation']", "//div[@class='footer']"]),
]
PAGES_PER_SOURCE = 6
MIN_TRUTH_CHARS = 400
NOT_TEXT = ["script", "style", "noscript", "template", "svg", "head"]
METHODS = ["ours", "page", "trafilatura"]


def parse(raw):
    return lxml.html.document_fromstring(raw, parser=lxml.html.HTMLParser(encoding="utf-8"))


def truth_text(raw, container, excluded):
    doc = parse(raw)
    found = doc.xpath(container)
    if not found:
        return None
    for path in excluded + ["//" + tag for tag in NOT_TEXT]:
        for element in doc.xpath(path):
            element.drop_tree()
    return " ".join(" ".join(element.itertext()) for element in found)


def tokens(text):
    return collections.Counter(re.findall(r"\w+", (text or "").lower()))


def score(extracted, truth):
    shared = sum((extracted & truth).values())
    precision = shared / max(1, sum(extracted.values()))
    recall = shared / max(1, sum(truth.values()))
    return precision, recall


def nearest_rank(values, share):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def choose(root):
    pages = []
    for source, generator, split, directory, pattern, container, excluded in SOURCES:
        base = os.path.join(root, directory)
        files = []
        for folder, _, names in os.walk(base):
            for name in names:
                relative = os.path.relpath(os.path.join(folder, name), base)
                if re.search(pattern, relative):
                    files.append(relative)
        files.sort()
        eligible = []
        for relative in files:
            with open(os.path.join(base, relative), "rb") as handle:
                raw = handle.read()
            truth = truth_text(raw, container, excluded)
            if truth and len(" ".join(truth.split())) >= MIN_TRUTH_CHARS:
                eligible.append(relative)
        step = max(1, len(eligible) // PAGES_PER_SOURCE)
        for relative in eligible[::step][:PAGES_PER_SOURCE]:
            pages.append({"source": source, "generator": generator, "split": split,
                          "path": os.path.join(directory, relative)})
    return pages


def main():
    command, root, manifest = sys.argv[1:4]
    if command == "pages":
        with open(manifest, "w") as handle:
            json.dump(choose(root), handle, indent=1)
        return
    out = sys.argv[4]
    sources = {s[0]: s for s in SOURCES}
    with open(manifest) as handle:
        pages = json.load(handle)
    rows = []
    for index, page in enumerate(pages):
        _, _, _, _, _, container, excluded = sources[page["source"]]
        with open(os.path.join(root, page["path"]), "rb") as handle:
            raw = handle.read()
        truth = tokens(truth_text(raw, container, excluded))
        texts = {}
        for method in ["ours", "page"]:
            with open(os.path.join(out, f"{index}.{method}.txt"), encoding="utf-8") as handle:
                texts[method] = handle.read()
        texts["trafilatura"] = trafilatura.extract(
            raw.decode("utf-8", "replace"), include_comments=False, include_tables=True) or ""
        row = dict(page)
        for method in METHODS:
            row[method] = score(tokens(texts[method]), truth)
        rows.append(row)
    report = {"pages": rows, "summary": {}}
    lines = ["| split | pages | method | precision p10 | precision median | recall median | recall p10 |",
             "|---|---|---|---|---|---|---|"]
    for split in ["tune", "report"]:
        chosen = [r for r in rows if r["split"] == split]
        for method in METHODS:
            precision = [r[method][0] for r in chosen]
            recall = [r[method][1] for r in chosen]
            figures = {
                "pages": len(chosen),
                "precision_p10": nearest_rank(precision, 0.1),
                "precision_median": statistics.median(precision),
                "recall_median": statistics.median(recall),
                "recall_p10": nearest_rank(recall, 0.1),
            }
            report["summary"][f"{split}/{method}"] = figures
            lines.append(f"| {split} | {len(chosen)} | {method} | {figures['precision_p10']:.3f} | "
                         f"{figures['precision_median']:.3f} | {figures['recall_median']:.3f} | "
                         f"{figures['recall_p10']:.3f} |")
    lines.append("")
    lines.append("| split | generator | pages | ours P / R (median) | page P / R | trafilatura P / R |")
    lines.append("|---|---|---|---|---|---|")
    for source, generator, split, *_ in SOURCES:
        chosen = [r for r in rows if r["source"] == source]
        if not chosen:
            continue
        cells = []
        for method in METHODS:
            p = statistics.median(r[method][0] for r in chosen)
            q = statistics.median(r[method][1] for r in chosen)
            cells.append(f"{p:.3f} / {q:.3f}")
        lines.append(f"| {split} | {generator} ({source}) | {len(chosen)} | " + " | ".join(cells) + " |")
    worst = sorted(rows, key=lambda r: min(r["ours"]))[:8]
    lines.append("")
    lines.append("worst pages for ours (precision, recall):")
    for r in worst:
        lines.append(f"  {r['ours'][0]:.3f} {r['ours'][1]:.3f} {r['split']} {r['path']}")
    with open(os.path.join(out, "report.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
