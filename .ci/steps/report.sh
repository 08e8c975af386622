#!/usr/bin/env bash
# The HTML report in a real browser: a quick run of every probe writes its
# report; headless Chromium loads it, the DOM must hold every section and a
# chart for each, and the screenshot must not be blank.
set -euo pipefail
dir="$(mktemp -d)"
bin="${CARGO_TARGET_DIR:-./target}/release/corescope"
"$bin" run --quick --no-progress --out "$dir/run.json" >"$dir/run.txt"
grep -q "report:   $dir/run.html" "$dir/run.txt"
chrome=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars)
"${chrome[@]}" --dump-dom "file://$dir/run.html" >"$dir/dom.html" 2>/dev/null
"${chrome[@]}" --window-size=1100,2400 --screenshot="$dir/shot.png" "file://$dir/run.html" 2>/dev/null
"$bin" compare "$dir/run.json" "$dir/run.json" --html "$dir/cmp.html" >/dev/null
"${chrome[@]}" --dump-dom "file://$dir/cmp.html" >"$dir/cmp-dom.html" 2>/dev/null
# At 1400 and 800 px: a screenshot of the report and of the compare page
# (two identical runs, so overlaid curves are exercised), and the page's
# scroll width read by a probe script appended to a copy of each page (the
# pages themselves carry no test code).
# The probe also counts table cells holding only a number (with its unit or
# interval) that the browser laid out on more than one line: a broken number.
probe="<script>addEventListener('load',function(){var d=document.documentElement,p=document.createElement('pre'),bad=0;document.querySelectorAll('td').forEach(function(td){var t=td.textContent.trim();if(!/^[-+]?[0-9][0-9.,]*( ?[^ 0-9]{1,8})?( ?±[0-9.]+ ?%)?$/.test(t))return;var r=document.createRange();r.selectNodeContents(td);var tops={};Array.prototype.forEach.call(r.getClientRects(),function(c){tops[Math.round(c.top)]=1;});if(Object.keys(tops).length>1)bad++;});p.id='overflow-probe';p.textContent=d.scrollWidth+' '+innerWidth+' '+bad;document.body.appendChild(p);});</script>"
for page in run cmp; do
    { cat "$dir/$page.html"; echo "$probe"; } >"$dir/$page-probe.html"
    for w in 1400 800; do
        "${chrome[@]}" --window-size=$w,2000 --dump-dom "file://$dir/$page-probe.html" \
            2>/dev/null | grep -o '<pre id="overflow-probe">[0-9]* [0-9]* [0-9]*' >"$dir/$page-$w.width"
        "${chrome[@]}" --window-size=$w,3000 --screenshot="$dir/$page-$w.png" "file://$dir/$page.html" 2>/dev/null
    done
done
/usr/bin/python3 - "$dir" <<'PY'
import json, re, sys
from PIL import Image
d = sys.argv[1]
run = json.load(open(f"{d}/run.json"))
dom = open(f"{d}/dom.html").read()
ids = [p["id"] for p in run["probes"]]
assert len(ids) >= 10, ids
for p in run["probes"]:
    m = re.search(r'<section id="%s">(.*?)</section>' % re.escape(p["id"]), dom, re.S)
    assert m, f"section {p['id']} missing from the DOM"
    body = m.group(1)
    # A series of one point is a table row, not a chart.
    curves = [s for s in p.get("series", []) if len(s["x"]) > 1]
    points = [s for s in p.get("series", []) if len(s["x"]) <= 1]
    shapes = len(curves) + sum(len(p.get(k, [])) for k in ("distributions", "matrices", "timelines"))
    if shapes:
        assert "<svg" in body, f"{p['id']}: no chart rendered"
    if points:
        assert "<table" in body, f"{p['id']}: one-point series without a table"
    for m in p.get("matrices", []):
        assert "colour-scale" in body, f"{p['id']}: heat map without a colour scale"
    if p.get("tables"):
        assert body.count("<table") >= len(p["tables"]), f"{p['id']}: tables missing"
assert '<section id="machine">' in dom
# Issue 42: the page answers first: the answers section comes before everything
# else, with a row linking to every probe's section.
answers = dom.find('<section id="answers">')
assert 0 <= answers < dom.find('<section id="machine">'), "the page does not open with its answers"
first = dom[answers:dom.find("</section>", answers)]
for i in ids:
    assert f'href="#{i}"' in first, f"answers: no row for {i}"
im = Image.open(f"{d}/shot.png").convert("L")
lo, hi = im.getextrema()
colours = len(set(Image.open(f"{d}/shot.png").convert("RGB").resize((275, 600)).getdata()))
assert hi - lo > 100 and colours > 20, f"screenshot looks blank ({lo}-{hi}, {colours} colours)"
cmp = open(f"{d}/cmp-dom.html").read()
for p in run["probes"]:
    i = p["id"]
    m = re.search(r'<section id="%s">(.*?)</section>' % re.escape(i), cmp, re.S)
    assert m, f"compare: {i} missing"
    body = m.group(1)
    if any(p.get(k) for k in ("series", "distributions", "matrices")):
        assert "<svg" in body, f"compare: {i} has no figure"
    for t in p.get("tables", []):
        assert t["name"] in body, f"compare: {i}: table {t['name']} missing"
    if p.get("matrices"):
        assert "ratio" in body, f"compare: {i}: no ratio heat map"
for page in ("run", "cmp"):
    for w in (1400, 800):
        text = open(f"{d}/{page}-{w}.width").read().split(">")[-1].split()
        assert len(text) == 3, f"{page} at {w} px: the width probe did not run"
        scroll, inner, broken = map(int, text)
        assert scroll <= inner, f"{page} at {w} px overflows: {scroll} px wide in {inner} px"
        assert broken == 0, f"{page} at {w} px: {broken} table cells break a number over lines"
        shot = Image.open(f"{d}/{page}-{w}.png").convert("RGB")
        assert shot.size[0] == w, shot.size
        n = len(set(shot.resize((w // 5, 600)).getdata()))
        assert n > 20, f"{page} at {w} px looks blank ({n} colours)"
# Issue 35: no interval of zero width where the samples differ, and no value
# without its count: n = 0 (spread unknown or none), 1 (one measurement, shown
# as such) or the samples behind it.
zero = 0
for p in run["probes"]:
    for s in p.get("series", []):
        for i, y in enumerate(s["y"]):
            n, samples = s["n"][i], s["samples"][i]
            assert n == len(samples) or n == 0, f"{p['id']} {s['name']} x={s['x'][i]}: n {n}, {len(samples)} samples"
            if n > 1 and s["y_lo"][i] == s["y_hi"][i]:
                assert len(set(samples)) == 1, f"{p['id']} {s['name']} x={s['x'][i]}: zero-width interval over differing samples"
                zero += 1
# Every legend entry of a chart reads differently (a name cut to its first
# characters made hspc and hspc-ring alike), and every line chart draws its title.
legends = 0
for page in ("run", "cmp"):
    html = open(f"{d}/{page}.html").read()
    for k, svg in enumerate(re.findall(r"<svg\b.*?</svg>", html, re.S)):
        entries = [
            "\n".join(re.findall(r"<text\b[^>]*>(.*?)</text>", g, re.S))
            for g in re.findall(r"<g class=['\"]legend['\"].*?</g>", svg, re.S)
        ]
        legends += len(entries)
        alike = sorted({e for e in entries if entries.count(e) > 1})
        assert not alike, f"{page}: chart {k}: legend entries read alike: {alike}"
        if entries:
            assert "class='chart-title'" in svg, f"{page}: chart {k} draws no title"
print(f"legends ok: {legends} entries, none alike within a chart")
print(f"intervals ok: zero width only where all samples are equal ({zero} points: counts that never varied, ratios of a point to itself)")
print(f"report ok: {len(ids)} sections, {dom.count('<svg')} charts, screenshot {colours} colours; "
      f"report and compare fit 1400 and 800 px")
PY
