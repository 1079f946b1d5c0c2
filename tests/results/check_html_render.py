#!/usr/bin/env python3
"""Checks `scalebench report --format html` in a real headless browser (Chromium).

usage: check_html_render.py CHROMIUM REPORT.html WORKDIR [MORE_KINDS]

MORE_KINDS: chart kinds the page must hold besides the five below, comma-separated (the
node-acceptance charts of a run with each-gpu/each-node cases: verdicts,telemetry; the
interconnect charts of a report with comms cases: busbw,pair-matrix).

1. A copy of the page with a probe script appended is loaded with --dump-dom: after layout the
   probe measures every chart (<svg class="chart" data-chart=KIND>) and counts its painted shapes
   (rect / circle / line / polyline / path with a non-empty bounding box) and the texts cut off
   at its edges; the result lands in the dumped DOM. Every kind (speedup, distribution, scaling,
   phases, task-stream, and MORE_KINDS) must be there with a non-zero size and shapes, and no text may be cut
   off. The headline (#headline) must be laid out at the top with the run status and the case
   tally; every chart must be followed by a legend whose swatches are drawn, and every colour a
   chart fills its shapes with must be one of the legends' swatch colours; the summary table's
   rows must all be one line high (no cell wraps), and at 1280 pixels neither the summary nor
   the page may scroll sideways. The browser log must hold no "Uncaught" error.
2. The page itself is rendered with --screenshot; the PNG (decoded here with zlib) must not be
   all background and must show the bar colour of the speedup chart.
Exit 0 when all holds, 1 otherwise (one line per failure).
"""
import json
import os
import re
import struct
import subprocess
import sys
import zlib

KINDS = ["speedup", "distribution", "scaling", "phases", "task-stream"]
BAR_BLUE = (0x4E, 0x79, 0xA7)  # results/src/format_html.cpp: speedup >= 1

PROBE = """
<script>
window.addEventListener('load', function () {
  var out = {charts: [], svgs: document.querySelectorAll('svg').length, errors: window.sbErrors,
             legends: [], swatches: [], fills: [], rows: []};
  var head = document.getElementById('headline');
  if (head) {
    var hb = head.getBoundingClientRect();
    out.headline = {top: hb.top, height: hb.height, width: hb.width, text: head.innerText,
                    first: document.querySelector('h1 + section') === head};
  }
  document.querySelectorAll('.legend').forEach(function (l) {
    var drawn = 0;
    l.querySelectorAll('.swatch').forEach(function (s) {
      var b = s.getBoundingClientRect();
      if (b.width > 0 && b.height > 0) drawn++;
      out.swatches.push(getComputedStyle(s).backgroundColor);
    });
    out.legends.push({name: l.getAttribute('data-legend'), drawn: drawn,
                      keys: l.querySelectorAll('.swatch').length});
  });
  document.querySelectorAll('svg.chart rect, svg.chart circle, svg.chart polygon').forEach(
      function (s) {
    var f = getComputedStyle(s).fill;
    if (f && f !== 'none' && out.fills.indexOf(f) < 0) out.fills.push(f);
  });
  document.querySelectorAll('#summary tr').forEach(function (r) {
    out.rows.push(r.getBoundingClientRect().height);
  });
  var scroller = document.getElementById('summary');
  scroller = scroller ? scroller.parentElement : null;
  out.summary_scroll = scroller ? {scroll: scroller.scrollWidth, client: scroller.clientWidth,
                                   table: document.getElementById('summary').offsetWidth}
                                : null;
  out.page_scroll = {scroll: document.documentElement.scrollWidth,
                     client: document.documentElement.clientWidth};
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var box = svg.getBoundingClientRect();
    var shapes = 0;
    svg.querySelectorAll('rect,circle,line,polyline,path,polygon').forEach(function (s) {
      var b = s.getBBox();
      if (b.width > 0 || b.height > 0) shapes++;
    });
    // Text cut off at the chart's edges (labels wider than the room left for them).
    var w = svg.width.baseVal.value, h = svg.height.baseVal.value, clipped = [];
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBBox();
      if (b.x < -0.5 || b.y < -0.5 || b.x + b.width > w + 0.5 || b.y + b.height > h + 0.5)
        clipped.push(t.textContent);
    });
    out.charts.push({kind: svg.getAttribute('data-chart'), width: box.width,
                     height: box.height, shapes: shapes,
                     texts: svg.querySelectorAll('text').length, clipped: clipped});
  });
  var pre = document.createElement('pre');
  pre.id = 'sb-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""
ERRORS = "<script>window.sbErrors = []; window.onerror = function (m) { sbErrors.push(m); };</script>"


def chromium(browser, workdir, *args):
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
           f"--user-data-dir={os.path.join(workdir, 'profile')}", *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "HOME": workdir})
    return p.returncode, p.stdout, p.stderr


def png_pixels(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace:
                raise ValueError(f"unsupported PNG (depth {depth}, colour type {color})")
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    browser, page, workdir = sys.argv[1:4]
    kinds = KINDS + (sys.argv[4].split(",") if len(sys.argv) == 5 else [])
    failures = []
    html = open(page, encoding="utf-8").read()
    probe_page = os.path.join(workdir, "probe.html")
    with open(probe_page, "w", encoding="utf-8") as f:
        f.write(html.replace("<head>", "<head>" + ERRORS, 1).replace("</body>", PROBE + "</body>", 1))

    rc, dom, log = chromium(browser, workdir, "--window-size=1280,2400", "--dump-dom",
                            "file://" + os.path.abspath(probe_page))
    if rc != 0:
        failures.append(f"chromium --dump-dom exited {rc}: {log.strip().splitlines()[-1:]}")
    for line in log.splitlines():
        if "Uncaught" in line:
            failures.append(f"browser error: {line.strip()}")
    m = re.search(r'<pre id="sb-probe">(.*?)</pre>', dom, re.S)
    if not m:
        failures.append("the probe found no charts: nothing in the dumped DOM")
        probe = {"charts": [], "svgs": 0, "errors": []}
    else:
        probe = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")
                           .replace("&lt;", "<").replace("&gt;", ">"))
    for e in probe.get("errors") or []:
        failures.append(f"script error in the page: {e}")
    charts = probe["charts"]
    if probe["svgs"] != len(charts):
        failures.append(f"{probe['svgs']} svg elements but {len(charts)} charts")
    for kind in kinds:
        mine = [c for c in charts if c["kind"] == kind]
        if not mine:
            failures.append(f"no {kind} chart in the rendered page")
        for c in mine:
            if not (c["width"] > 0 and c["height"] > 0 and c["shapes"] > 0):
                failures.append(f"{kind} chart not rendered: {c}")
            if c["clipped"]:
                failures.append(f"{kind} chart cuts off {len(c['clipped'])} text(s), "
                                f"e.g. {c['clipped'][0]!r}")
    print("charts:", ", ".join(f"{c['kind']} {c['width']:.0f}x{c['height']:.0f} "
                               f"({c['shapes']} shapes)" for c in charts))

    head = probe.get("headline")
    if not head:
        failures.append("no headline (#headline) in the page")
    else:
        if not (head["height"] > 0 and head["width"] > 0 and head["first"]):
            failures.append(f"headline not laid out first under the title: {head}")
        if not re.search(r"Run \S+", head["text"]) or not re.search(r"\d+ ok", head["text"]) \
                or "host" not in head["text"]:
            failures.append(f"headline lacks the status, the tally or the host: {head['text']!r}")
        print("headline:", " | ".join([l for l in head["text"].splitlines() if l.strip()][:2]))
    legends = {l["name"]: l for l in probe.get("legends", [])}
    for kind in kinds:
        l = legends.get(kind)
        if not l:
            failures.append(f"no legend for the {kind} chart")
        elif l["keys"] == 0 or l["drawn"] != l["keys"]:
            failures.append(f"{kind} legend: {l['drawn']} of {l['keys']} swatches drawn")
    unexplained = [f for f in probe.get("fills", []) if f not in probe.get("swatches", [])]
    if unexplained:
        failures.append(f"chart colours no legend explains: {unexplained}")
    rows = probe.get("rows", [])
    if not rows:
        failures.append("no summary table")
    elif max(rows) > 1.5 * min(rows):
        failures.append(f"summary rows of uneven height (a cell wraps): {min(rows):.0f} to "
                        f"{max(rows):.0f} px")
    # A 1280-pixel window shows the summary whole: no sideways scroll of the table or the page.
    for what, key in (("summary table", "summary_scroll"), ("page", "page_scroll")):
        sc = probe.get(key)
        if sc:
            print(f"{what}: {sc.get('table', sc['scroll'])} px wide in {sc['client']} px")
        if sc and sc["scroll"] > sc["client"] + 1:
            failures.append(f"the {what} scrolls sideways at 1280 px: {sc['scroll']} px wide in "
                            f"{sc['client']} px")
    print(f"legends: {', '.join(sorted(legends))}; {len(probe.get('fills', []))} chart colours, "
          f"all explained" if not unexplained else "")

    shot = os.path.join(workdir, "page.png")
    rc, _, log = chromium(browser, workdir, f"--screenshot={shot}", "--window-size=1280,2400",
                          "file://" + os.path.abspath(page))
    if rc != 0 or not os.path.exists(shot):
        failures.append(f"chromium --screenshot exited {rc}, no PNG")
    else:
        width, height, bpp, rows = png_pixels(shot)
        background = tuple(rows[0][0:3])
        painted = blue = 0
        for line in rows:
            for x in range(0, width * bpp, bpp):
                px = tuple(line[x:x + 3])
                if px != background:
                    painted += 1
                if px == BAR_BLUE:
                    blue += 1
        share = painted / (width * height)
        print(f"screenshot {width}x{height}: {share:.1%} painted, {blue} bar-blue pixels")
        if share < 0.01:
            failures.append(f"screenshot nearly blank ({share:.2%} of pixels painted)")
        if blue < 50:
            failures.append(f"no speedup bars on the screenshot ({blue} bar-blue pixels)")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
