#!/usr/bin/env bash
# The HTML report in a real browser: a quick run of every probe writes its
# report; headless Chromium loads it, the DOM must hold every section and a
# chart for each, and the screenshot must not be blank.
set -euo pipefail
dir="$(mktemp -d)"
bin=./target/release/corescope
"$bin" run --quick --no-progress --out "$dir/run.json" >"$dir/run.txt"
grep -q "report:   $dir/run.html" "$dir/run.txt"
chrome=(chromium --headless --no-sandbox --disable-gpu --hide-scrollbars)
"${chrome[@]}" --dump-dom "file://$dir/run.html" >"$dir/dom.html" 2>/dev/null
"${chrome[@]}" --window-size=1100,2400 --screenshot="$dir/shot.png" "file://$dir/run.html" 2>/dev/null
"$bin" compare "$dir/run.json" "$dir/run.json" --html "$dir/cmp.html" >/dev/null
"${chrome[@]}" --dump-dom "file://$dir/cmp.html" >"$dir/cmp-dom.html" 2>/dev/null
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
    shapes = sum(len(p.get(k, [])) for k in ("series", "distributions", "matrices", "timelines"))
    if shapes:
        assert "<svg" in body, f"{p['id']}: no chart rendered"
    if p.get("tables"):
        assert body.count("<table") >= len(p["tables"]), f"{p['id']}: tables missing"
assert '<section id="machine">' in dom
im = Image.open(f"{d}/shot.png").convert("L")
lo, hi = im.getextrema()
colours = len(set(Image.open(f"{d}/shot.png").convert("RGB").resize((275, 600)).getdata()))
assert hi - lo > 100 and colours > 20, f"screenshot looks blank ({lo}-{hi}, {colours} colours)"
cmp = open(f"{d}/cmp-dom.html").read()
for i in ids:
    assert f'<section id="{i}">' in cmp, f"compare: {i} missing"
print(f"report ok: {len(ids)} sections, {dom.count('<svg')} charts, screenshot {colours} colours")
PY
