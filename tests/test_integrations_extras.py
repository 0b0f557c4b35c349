"""The Phoenix, Inspect and RAGAS adapters import nothing heavy, and a missing extra is one line naming its install.

Each check runs in a fresh interpreter; a missing package is simulated by ``sys.modules[name] = None`` (what
Python does for a package that is not installed: ``import`` raises ModuleNotFoundError).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

ADAPTERS = {   # module -> (the outside packages it must not import, the extra, a use that needs the package)
    "groundjudge.integrations.phoenix": (("phoenix", "opentelemetry"), "phoenix",
                                         "adapter.client_for('http://127.0.0.1:9')"),
    "groundjudge.integrations.inspect": (("inspect_ai",), "inspect", "adapter.grounded"),
    "groundjudge.integrations.ragas": (("ragas", "langchain_core"), "ragas", "adapter.Groundedness"),
}


def _python(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter of this environment."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("module", sorted(ADAPTERS))
def test_importing_an_adapter_imports_no_outside_package(module: str) -> None:
    heavy = ADAPTERS[module][0]
    code = (f"import sys, groundjudge, {module}\n"
            f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r})\n"
            "print(loaded)")
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("module", sorted(ADAPTERS))
def test_a_missing_extra_is_one_line_naming_its_install(module: str) -> None:
    heavy, extra, use = ADAPTERS[module]
    code = (f"import sys\nsys.modules[{heavy[0]!r}] = None\n"
            f"import {module} as adapter\n"
            "from groundjudge.integrations.extras import MissingExtraError\n"
            f"try:\n    {use}\n"
            "except MissingExtraError as error:\n    print(error)\n"
            "else:\n    print('no error')")
    result = _python(code)
    assert result.returncode == 0, result.stderr
    [line] = result.stdout.strip().splitlines()
    assert f'pip install "groundjudge[{extra}]"' in line


def test_the_phoenix_and_inspect_mappings_need_no_extra() -> None:
    from groundjudge.integrations.inspect import sample_context, score_fields
    from groundjudge.integrations.phoenix import annotator_kind, span_annotation, span_id_of
    from groundjudge.integrations.verdicts import VerdictView

    view = VerdictView(example_id="a", judge="direct:model=gpt-4o-mini", kind="direct", label="ungrounded",
                       score=0.2, path="fallback:llm:gpt-4o-mini", meta={"span_id": 0xB7AD6B7169203331})
    assert annotator_kind(view) == "LLM"
    assert annotator_kind(view.model_copy(update={"path": "fallback:local:nli(x)"})) == "CODE"
    assert span_id_of(view) == "b7ad6b7169203331"
    annotation = span_annotation(view)
    assert annotation["name"] == "groundjudge:direct:model=gpt-4o-mini"
    assert annotation["result"] == {"label": "ungrounded", "score": 0.2, "explanation": "ungrounded (score 0.200) "
                                                                                        "by direct:model=gpt-4o-mini"}
    assert score_fields(view, "The answer.")["value"] == 0.0
    tool = type("Msg", (), {"role": "tool", "error": None, "function": "retrieve", "text": "Doc one."})()
    assert sample_context({"context": "Given."}, [tool]) == ["Given."]
    assert sample_context({}, [tool]) == ["Doc one."] and sample_context({}, [tool], tool="search") == []
