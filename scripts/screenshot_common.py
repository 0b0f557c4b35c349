"""What the integration screenshot scripts share: the committed rows they judge and a bounded wait for a page.

Used by scripts/screenshot_integrations.py (MLflow) and scripts/screenshot_phoenix.py (Phoenix), so that neither
imports the other.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "datasets" / "legal_types" / "legal_types.jsonl"


def test_rows(n: int) -> list[dict]:
    """The first ``n`` rows of datasets/legal_types' test split, in file order."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [row for row in rows if row.get("split") == "test"][:n]


def open_page(driver, url: str, wait_text: str) -> None:
    """Open ``url`` and wait (bounded) until the page shows ``wait_text``."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, 90).until(lambda d: wait_text in d.find_element("tag name", "body").text)
    time.sleep(3)   # let the table finish drawing
