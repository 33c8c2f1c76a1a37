"""Main-content extraction on the open web: WCXB's dev split and the ScrapingHub article set.

Run by `cargo xtask extraction`:
  web.py pages WCXB SCRAPINGHUB WORK     unpack the pages into WORK/html, write WORK/web.json
                                         and WORK/web.list (the HTML files, one a line)
  web.py score WORK OUT                  score the texts xtask wrote into OUT, print the tables

WCXB (Web Content eXtraction Benchmark, CC-BY-4.0): only its `dev/` split is read, never
`test/`. Each page is scored with WCXB's own `word_f1` (word-level F1) against its
`main_content`, and grouped by its own page type. Dev is split by a fixed rule into a tune half
(even file number) and a report half (odd file number) for a figure the tuning did not look at.
ScrapingHub (article-extraction-benchmark, MIT): 181 news and blog pages, scored with its own
`string_shingle_matching` and `metrics_from_tp_fp_fns` (shingle F1 of the means).

Methods: ours (`format: "text"`), page (`format: "page"`, the whole page as text), trafilatura
and readability-lxml (their texts are cached in WORK/compare, as they do not change between runs).
"""

import gzip
import importlib.util
import json
import math
import os
import statistics
import sys

METHODS = ["ours", "page", "trafilatura", "readability"]
TYPES = ["article", "forum", "product", "collection", "listing", "documentation", "service"]


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pages(wcxb, scrapinghub, work):
    wcxb_eval = load_module("wcxb_evaluate", os.path.join(wcxb, "evaluate.py"))
    html_dir = os.path.join(work, "html")
    os.makedirs(html_dir, exist_ok=True)
    manifest = []

    def unpack(source, target):
        if not os.path.exists(target):
            with gzip.open(source, "rb") as packed, open(target, "wb") as plain:
                plain.write(packed.read())

    truth_dir = os.path.join(wcxb, "dev", "ground-truth")
    for name in sorted(os.listdir(truth_dir)):
        with open(os.path.join(truth_dir, name)) as handle:
            data = json.load(handle)
        truth = data.get("ground_truth")
        if not isinstance(truth, dict):
            continue
        file_id = name[: -len(".json")]
        target = os.path.join(html_dir, f"wcxb-{file_id}.html")
        unpack(os.path.join(wcxb, "dev", "html", f"{file_id}.html.gz"), target)
        manifest.append({"set": "wcxb", "id": file_id, "type": wcxb_eval.get_page_type(data),
                         "split": "tune" if int(file_id) % 2 == 0 else "report",
                         "path": target, "truth": truth.get("main_content", "") or ""})
    with open(os.path.join(scrapinghub, "ground-truth.json")) as handle:
        articles = json.load(handle)
    for key in sorted(articles):
        target = os.path.join(html_dir, f"scrapinghub-{key}.html")
        unpack(os.path.join(scrapinghub, "html", f"{key}.html.gz"), target)
        manifest.append({"set": "scrapinghub", "id": key, "type": "article", "split": "report",
                         "path": target, "truth": articles[key].get("articleBody", "")})
    with open(os.path.join(work, "web.json"), "w") as handle:
        json.dump(manifest, handle)
    with open(os.path.join(work, "web.list"), "w") as handle:
        handle.write("".join(page["path"] + "\n" for page in manifest))


def compare_text(method, page, work):
    cached = os.path.join(work, "compare", method, f"{page['set']}-{page['id']}.txt")
    if os.path.exists(cached):
        with open(cached, encoding="utf-8") as handle:
            return handle.read()
    with open(page["path"], "rb") as handle:
        raw = handle.read().decode("utf-8", "replace")
    text = ""
    try:
        if method == "trafilatura":
            import trafilatura
            text = trafilatura.extract(raw, include_comments=False, include_tables=True) or ""
        else:
            import lxml.html
            from readability import Document
            summary = Document(raw).summary(html_partial=True)
            text = lxml.html.fromstring(summary).text_content() if summary.strip() else ""
    except Exception:  # an extractor that fails on a page gives nothing for it
        text = ""
    os.makedirs(os.path.dirname(cached), exist_ok=True)
    with open(cached, "w", encoding="utf-8") as handle:
        handle.write(text)
    return text


def nearest_rank(values, share):
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def score(work, out, wcxb, scrapinghub):
    wcxb_eval = load_module("wcxb_evaluate", os.path.join(wcxb, "evaluate.py"))
    sh_eval = load_module("scrapinghub_evaluate", os.path.join(scrapinghub, "evaluate.py"))
    with open(os.path.join(work, "web.json")) as handle:
        manifest = json.load(handle)
    rows = []
    for index, page in enumerate(manifest):
        texts = {}
        for method in ["ours", "page"]:
            with open(os.path.join(out, f"{index}.{method}.txt"), encoding="utf-8") as handle:
                texts[method] = handle.read()
        for method in ["trafilatura", "readability"]:
            texts[method] = compare_text(method, page, work)
        row = {k: page[k] for k in ["set", "id", "type", "split"]}
        for method in METHODS:
            if page["set"] == "wcxb":
                row[method] = wcxb_eval.word_f1(texts[method], page["truth"])
            else:
                row[method] = sh_eval.string_shingle_matching(true=page["truth"], pred=texts[method])
        rows.append(row)
    mean = statistics.mean
    lines = ["WCXB dev, word F1 (mean), by page type:", "",
             "| page type | pages | ours | page text | trafilatura | readability-lxml | ours below 0.1 |",
             "|---|---|---|---|---|---|---|"]
    wcxb_rows = [r for r in rows if r["set"] == "wcxb"]
    groups = [(t, [r for r in wcxb_rows if r["type"] == t]) for t in TYPES]
    groups += [("all (tune half)", [r for r in wcxb_rows if r["split"] == "tune"]),
               ("all (report half)", [r for r in wcxb_rows if r["split"] == "report"]),
               ("**all**", wcxb_rows)]
    summary = {}
    for name, chosen in groups:
        if not chosen:
            continue
        f1 = {m: mean(r[m][2] for r in chosen) for m in METHODS}
        low = sum(1 for r in chosen if r["ours"][2] < 0.1)
        summary[name] = f1
        lines.append(f"| {name} | {len(chosen)} | " +
                     " | ".join(f"{f1[m]:.3f}" for m in METHODS) + f" | {low} |")
    worse = [r for r in wcxb_rows if r["ours"][2] < 0.1 and r["page"][2] > 0.3]
    lines += ["", f"WCXB dev pages where ours is below 0.1 F1 and the page text above 0.3: "
                  f"{len(worse)} of {len(wcxb_rows)} ({100 * len(worse) / len(wcxb_rows):.1f} %)"]
    sh_rows = [r for r in rows if r["set"] == "scrapinghub"]
    lines += ["", "ScrapingHub article set (shingle F1, its evaluate.py):", "",
              "| method | F1 | precision | recall | pages below 0.1 F1 |", "|---|---|---|---|---|"]
    for method in METHODS:
        figures = sh_eval.metrics_from_tp_fp_fns([r[method] for r in sh_rows])
        low = sum(1 for r in sh_rows if r[method][0] / max(1e-9, r[method][0] + (r[method][1] + r[method][2]) / 2) < 0.1)
        lines.append(f"| {method} | {figures['f1']:.3f} | {figures['precision']:.3f} | "
                     f"{figures['recall']:.3f} | {low} |")
    with open(os.path.join(out, "timings.json")) as handle:
        timings = json.load(handle)
    ms = [t[1] for t in timings]
    big = max(timings, key=lambda t: t[0])
    lines += ["", f"ours, time per page (all {len(ms)} pages, fastest of 3 runs): median "
                  f"{statistics.median(ms):.2f} ms, p95 {nearest_rank(ms, 0.95):.2f} ms, "
                  f"max {max(ms):.2f} ms; largest page {big[0]} bytes in {big[1]:.2f} ms"]
    worst = sorted((r for r in wcxb_rows if r["split"] == "tune"), key=lambda r: r["ours"][2] - r["page"][2])[:25]
    lines += ["", "tune-half pages where ours loses most to the page text (id type ours page):"]
    lines += [f"  {r['id']} {r['type']} {r['ours'][2]:.3f} {r['page'][2]:.3f}" for r in worst]
    with open(os.path.join(out, "report.json"), "w") as handle:
        json.dump({"pages": rows, "summary": summary}, handle, indent=1)
    print("\n".join(lines))


def main():
    command = sys.argv[1]
    if command == "pages":
        pages(*sys.argv[2:5])
    else:
        score(*sys.argv[2:6])


if __name__ == "__main__":
    main()
