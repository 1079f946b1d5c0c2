#!/usr/bin/env python3
"""Checks `scalebench history report --format html` in a real headless browser (Chromium).

usage: check_history_html.py CHROMIUM PAGE.html WORKDIR MIN_STEPS

1. A copy of the page with a probe script is loaded with --dump-dom: every trend chart
   (<svg class="chart" data-chart="history">) must have a size, painted shapes, no text cut
   off at its edges, and as many change-point markers (line.change-point) as its
   data-change-points attribute; at least MIN_STEPS markers in all. No script error.
2. The page itself is rendered with --screenshot: not blank, and the change-point colour shows.
Exit 0 when all holds, 1 otherwise (one line per failure). The browser helpers are those of
check_html_render.py (the run report's check).
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_html_render import ERRORS, chromium, png_pixels  # noqa: E402

STEP_RED = (0xE1, 0x57, 0x59)  # results/src/history_format_html.cpp: kStepColor

PROBE = """
<script>
window.addEventListener('load', function () {
  var out = {charts: [], svgs: document.querySelectorAll('svg').length, errors: window.sbErrors};
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var box = svg.getBoundingClientRect(), shapes = 0, clipped = [];
    svg.querySelectorAll('rect,circle,line,polyline,path,polygon').forEach(function (s) {
      var b = s.getBBox();
      if (b.width > 0 || b.height > 0) shapes++;
    });
    var w = svg.width.baseVal.value, h = svg.height.baseVal.value;
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBBox();
      if (b.x < -0.5 || b.y < -0.5 || b.x + b.width > w + 0.5 || b.y + b.height > h + 0.5)
        clipped.push(t.textContent);
    });
    out.charts.push({kind: svg.getAttribute('data-chart'), width: box.width, height: box.height,
                     shapes: shapes, clipped: clipped,
                     declared: parseInt(svg.getAttribute('data-change-points') || '0'),
                     markers: svg.querySelectorAll('line.change-point').length});
  });
  var pre = document.createElement('pre');
  pre.id = 'sb-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>
"""


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    browser, page, workdir, min_steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    failures = []
    html = open(page, encoding="utf-8").read()
    if "<script" in html or "http://" in html or "https://" in html:
        failures.append("the page is not self-contained (a script or a link)")
    probe_page = os.path.join(workdir, "probe.html")
    with open(probe_page, "w", encoding="utf-8") as f:
        f.write(html.replace("<head>", "<head>" + ERRORS, 1).replace("</body>", PROBE + "</body>", 1))
    rc, dom, log = chromium(browser, workdir, "--dump-dom", "file://" + os.path.abspath(probe_page))
    if rc != 0:
        failures.append(f"chromium --dump-dom exited {rc}")
    for line in log.splitlines():
        if "Uncaught" in line:
            failures.append(f"browser error: {line.strip()}")
    m = re.search(r'<pre id="sb-probe">(.*?)</pre>', dom, re.S)
    probe = {"charts": [], "svgs": 0, "errors": []}
    if m:
        probe = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")
                           .replace("&lt;", "<").replace("&gt;", ">"))
    else:
        failures.append("the probe found nothing in the dumped DOM")
    for e in probe.get("errors") or []:
        failures.append(f"script error in the page: {e}")
    charts = probe["charts"]
    if not charts:
        failures.append("no trend chart in the rendered page")
    markers = 0
    for c in charts:
        if c["kind"] != "history":
            failures.append(f"unexpected chart kind {c['kind']}")
        if not (c["width"] > 0 and c["height"] > 0 and c["shapes"] > 0):
            failures.append(f"chart not rendered: {c}")
        if c["clipped"]:
            failures.append(f"chart cuts off {len(c['clipped'])} text(s), e.g. {c['clipped'][0]!r}")
        if c["markers"] != c["declared"]:
            failures.append(f"{c['markers']} change-point markers, {c['declared']} declared")
        markers += c["markers"]
    if markers < min_steps:
        failures.append(f"{markers} change-point markers, expected at least {min_steps}")
    print(f"{len(charts)} trend charts, {markers} change points marked")

    shot = os.path.join(workdir, "page.png")
    rc, _, _ = chromium(browser, workdir, f"--screenshot={shot}", "--window-size=1280,3000",
                        "file://" + os.path.abspath(page))
    if rc != 0 or not os.path.exists(shot):
        failures.append(f"chromium --screenshot exited {rc}, no PNG")
    elif min_steps > 0:
        width, height, bpp, rows = png_pixels(shot)
        background = tuple(rows[0][0:3])
        painted = red = 0
        for line in rows:
            for x in range(0, width * bpp, bpp):
                px = tuple(line[x:x + 3])
                painted += px != background
                red += px == STEP_RED
        share = painted / (width * height)
        print(f"screenshot {width}x{height}: {painted} pixels ({share:.1%}) painted, "
              f"{red} change-point pixels")
        # Absolute, not a share of the window: one chart on a tall window is a small share,
        # and its size depends on the fonts the machine has.
        if painted < 5000 * max(1, len(charts)):
            failures.append(f"screenshot nearly blank ({painted} pixels painted)")
        if red < 30:
            failures.append(f"no change-point marker on the screenshot ({red} pixels)")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
