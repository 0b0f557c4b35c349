"""The documentation site builds strictly (every warning an error: broken links, references, anchors, images),
offline, with its generated reference pages and its search index."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("sphinx", reason="the docs toolchain: pip install -e '.[docs]'")
pytest.importorskip("myst_parser", reason="the docs toolchain: pip install -e '.[docs]'")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once with ``sphinx -W`` into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "GROUNDJUDGE_REPO_URL": ""}
    result = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-E", "-b", "html",
                             str(ROOT / "docs"), str(out)], capture_output=True, text=True, timeout=600,
                            cwd=ROOT, env=env)
    assert result.returncode == 0, f"sphinx-build -W failed:\n{result.stderr[-6000:]}"
    return out


@pytest.mark.slow
def test_the_site_builds_strictly_with_search(site):
    assert (site / "index.html").is_file()
    assert (site / "search.html").is_file()
    index = (site / "searchindex.js").read_text(encoding="utf-8")
    assert "calibrat" in index and "cascad" in index   # the pages' words are in the offline search index


def test_the_reference_is_generated_from_the_code(site):
    from groundjudge.cli import build_parser
    from groundjudge.judges import load_builtin_judges

    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    verbs = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for verb in verbs:
        assert f"groundjudge {verb}" in cli, verb
    assert "--calibrate-on" in cli
    for command, flag in (("label-benchmark draw", "--exclude"), ("label-benchmark measure", "--labels")):
        section = cli.split(f'id="groundjudge-{command.replace(" ", "-")}"', 1)[1].split("<section", 1)[0]
        assert f"groundjudge {command}" in section and flag in section, command   # sub-commands have sections
    judges = (site / "reference" / "judges.html").read_text(encoding="utf-8")
    for kind in load_builtin_judges():
        assert f'id="{kind}"' in judges, kind
    schemas = (site / "reference" / "schemas.html").read_text(encoding="utf-8")
    assert "balanced_accuracy" in schemas and "abstain_reason" in schemas
    api = (site / "reference" / "python-api.html").read_text(encoding="utf-8")
    assert 'id="groundjudge.api.evaluate"' in api


@pytest.mark.slow
def test_links_to_repository_files_point_at_the_files(site):
    for page, name in ((site / "results.html", "results/README.md"), (site / "howto" / "local-judges.html", "")):
        html = page.read_text(encoding="utf-8")
        targets = set(re.findall(r'href="([^"#:]*results/[^"#]*)"', html))
        assert targets, f"{page.name} links to results/"
        for target in targets:
            assert (page.parent / target).resolve().exists(), target
            assert ROOT / "results" in (page.parent / target).resolve().parents, target


def test_search_works_offline_from_the_built_files(site):
    from browser import chromium
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with chromium() as browser:
        browser.get((site / "search.html").as_uri() + "?q=cascade")
        WebDriverWait(browser, 30).until(
            lambda b: b.find_elements(By.CSS_SELECTOR, "#search-results ul.search li"))
        titles = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#search-results ul.search li a")]
    assert any("cascade" in title.lower() for title in titles), titles


def test_the_cli_reference_walks_sub_commands_at_any_depth():
    import argparse

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    from gj_reference import cli_reference

    from groundjudge.cli import build_parser

    def options(lines: list[str], heading: str) -> str:
        start = lines.index(heading)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
        return "\n".join(lines[start:end])

    lines = cli_reference(build_parser())
    assert "## groundjudge label-benchmark" in lines
    assert "`--exclude`" in options(lines, "### groundjudge label-benchmark draw")
    assert "`--labels`" in options(lines, "### groundjudge label-benchmark measure")

    tool = argparse.ArgumentParser(prog="tool")
    top = tool.add_subparsers().add_parser("a", help="level one")
    middle = top.add_subparsers().add_parser("b", help="level two", aliases=["bee"])
    middle.add_subparsers().add_parser("c", help="level three").add_argument("--deep", help="three down")
    lines = cli_reference(tool)
    assert [line for line in lines if line.startswith("#")] == ["## tool a", "### tool a b", "#### tool a b c"]
    assert "`--deep`" in options(lines, "#### tool a b c")
