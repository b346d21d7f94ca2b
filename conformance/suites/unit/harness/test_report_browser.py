"""The HTML report in a real headless browser (Chromium): it renders, and the engine cards fit a
laptop screen (1366 px) without a horizontal scroll bar. Chromium comes from Debian's packages
(`.ci/run` installs it); without it the test skips, unless LAKECONF_REQUIRE_BROWSER=1 (CI)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from conformance.report import render_html

PROBE = """
<script>
window.addEventListener('load', () => {
  const cards = document.querySelector('.cards');
  const widest = Math.max(...[...document.querySelectorAll('.card')].map(c => c.getBoundingClientRect().right));
  document.body.setAttribute('data-probe', JSON.stringify({
    viewport: window.innerWidth, cards: cards.scrollWidth, cardsBox: cards.clientWidth,
    right: Math.round(widest), n: document.querySelectorAll('.card').length}));
});
</script>
"""


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_cards_render_and_fit_a_laptop_screen(results_doc, tmp_path):
    browser = _chromium()
    if browser is None:
        if os.environ.get("LAKECONF_REQUIRE_BROWSER") == "1":
            pytest.fail("LAKECONF_REQUIRE_BROWSER=1 but no Chromium: apt-get install chromium")
        pytest.skip("no Chromium here (apt-get install chromium)")
    page = tmp_path / "report.html"
    page.write_text(render_html(results_doc).replace("</body>", PROBE + "</body>"), encoding="utf-8")
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1366,768",
         "--virtual-time-budget=5000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    m = re.search(r"data-probe=\"([^\"]+)\"", proc.stdout)
    assert m, f"the page did not finish rendering: {proc.stderr[-500:]}"
    import html
    import json

    probe = json.loads(html.unescape(m.group(1)))
    assert probe["n"] == 3  # one card per reader
    assert probe["cards"] <= probe["cardsBox"] and probe["right"] <= probe["viewport"], probe
