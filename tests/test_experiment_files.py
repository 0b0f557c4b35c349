"""Experiment files (``groundjudge run EXPERIMENT.toml``), judge spec strings and ``groundjudge prompts``.

The experiment files are written under tmp_path next to a 12-row copy of the bundled legal data (4 dev, 8 test
rows); every run goes through the real CLI in-process (``groundjudge.cli.main``). A bad experiment file must exit 2
with exactly one ``error: FILE:LINE: ...`` line on stderr, at the line of the key at fault, and leave no run folder.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from groundjudge.cli import main
from groundjudge.experiment import ExperimentError, load_experiment
from groundjudge.judges import SpecError, build_judge
from groundjudge.judges.config import JudgeConfig, SettingError
from groundjudge.llm.templates import PACKAGE_PROMPTS, PromptLibrary
from groundjudge.runs.records import read_records

ROOT = Path(__file__).resolve().parents[1]
LEGAL = ROOT / "datasets" / "legal_qa" / "legal_qa.jsonl"
CHANGED_LINE = "Be strict: a claim with any detail the evidence lacks is unverifiable."


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """tmp_path holding legal.jsonl: the first 12 rows of the bundled legal data."""
    lines = LEGAL.read_text(encoding="utf-8").splitlines(keepends=True)[:12]
    (tmp_path / "legal.jsonl").write_text("".join(lines), encoding="utf-8")
    return tmp_path


def write_experiment(folder: Path, text: str, name: str = "experiment.toml") -> Path:
    """The experiment file ``name`` in ``folder`` (its data paths are relative to it)."""
    path = folder / name
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def line_of(path: Path, snippet: str, occurrence: int = 1) -> int:
    """The 1-based line of the ``occurrence``-th line of the file that contains ``snippet``."""
    found = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if snippet in line]
    assert len(found) >= occurrence, (snippet, found)
    return found[occurrence - 1]


def strict_prompts(folder: Path) -> Path:
    """prompts/strict: the built-in claims_verify system prompt with its first line of text (after the import of
    the shared macros) changed."""
    strict = folder / "prompts" / "strict"
    strict.mkdir(parents=True)
    lines = (PACKAGE_PROMPTS / "claims_verify.system.j2").read_text(encoding="utf-8").splitlines(keepends=True)
    first = 1 if lines[0].startswith("{% from") else 0
    lines[first] = CHANGED_LINE + "\n"
    (strict / "claims_verify.system.j2").write_text("".join(lines), encoding="utf-8")
    return strict


def one_error_line(capsys) -> str:
    """The single ``error: ...`` line on stderr (no traceback, nothing else)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, err
    return err.rstrip("\n")


# 1. The minimal shape ----------------------------------------------------------------------------------

MINIMAL = """
[data]
files = ["legal.jsonl"]

[judges.quip]
kind = "quip"
matrix = { n = [11, 21] }

[judges.claims]
kind = "claims"
model = "openai/gpt-4o-mini"
prompts = "prompts/strict"
"""


def test_the_minimal_experiment_dry_runs_with_the_expanded_names(folder, capsys):
    strict_prompts(folder)
    path = write_experiment(folder, MINIMAL)
    out = folder / "run"
    code = main(["run", str(path), "--dry-run", "--out", str(out), "--cache-dir", str(folder / "cache")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.err
    for name in ("quip[n=11]", "quip[n=21]", "claims"):
        assert name in captured.out, captured.out
    assert "dry run: 3 judge(s)" in captured.out
    assert not out.exists()     # a dry run writes no run folder


def test_the_minimal_experiment_loads_typed_configs(folder):
    strict = strict_prompts(folder)
    experiment = load_experiment(write_experiment(folder, MINIMAL))
    assert [j.name for j in experiment.judges] == ["quip[n=11]", "quip[n=21]", "claims"]
    assert [j.kind for j in experiment.judges] == ["quip", "quip", "claims"]
    quip11, quip21, claims = experiment.judges
    assert quip11.settings == {"n": 11} and quip21.settings == {"n": 21}
    assert all(type(j.settings["n"]) is int for j in (quip11, quip21))
    assert claims.settings["model"] == "openai/gpt-4o-mini"
    assert Path(claims.settings["prompts"]).is_absolute()
    assert Path(claims.settings["prompts"]) == strict
    assert experiment.data.files == [str(folder / "legal.jsonl")]
    # the source of each judge names the file and its table's line
    assert quip11.source == f"{folder / 'experiment.toml'}:{line_of(folder / 'experiment.toml', '[judges.quip]')}"
    assert claims.source.endswith(f":{line_of(folder / 'experiment.toml', '[judges.claims]')}")
    # the strict folder's template replaces the built-in one; the rest are the built-ins
    judge = claims.build()
    assert CHANGED_LINE in judge.library.render("claims_verify", {"claims": ["x"], "facts": None,
                                                                    "context": ["doc"]}).messages[0]["content"]


# 2. A real run with local judges -------------------------------------------------------------------------------

LOCAL = """
[data]
files = ["legal.jsonl"]
sample = 8
seed = 3

[run]
out = "{file_out}"

[judges.quip]
kind = "quip"
matrix = {{ n = [11, 21], agg = ["mean", "min"] }}
"""
LOCAL_NAMES = ["quip[n=11, agg=mean]", "quip[n=11, agg=min]", "quip[n=21, agg=mean]", "quip[n=21, agg=min]"]


def test_a_local_experiment_runs_and_the_flags_override_the_file(folder, capsys):
    file_out = folder / "from_the_file"
    path = write_experiment(folder, LOCAL.format(file_out=file_out.as_posix()))
    out = folder / "tmp" / "run"
    code = main(["run", str(path), "--out", str(out), "--quiet", "--dev-fraction", "0", "--sample", "5"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.err
    assert not file_out.exists()          # --out wins over [run] out
    records = read_records(out / "records.jsonl")
    header = records.header
    assert [j.spec for j in header.judges] == LOCAL_NAMES
    assert {j.name for j in header.judges} == {"quip"}
    for spec in header.judges:
        n, agg = spec.spec[len("quip[n="):-1].split(", agg=")
        assert spec.settings["n"] == int(n) and spec.settings["agg"] == agg
    assert header.dataset.n == 5          # --sample 5 wins over sample = 8
    assert sorted({r.judge for r in records.results}) == sorted(LOCAL_NAMES)
    assert len(records.results) == 5 * len(LOCAL_NAMES)
    assert (out / "summary.json").exists()


def test_a_local_experiment_uses_the_file_values_without_flags(folder, capsys):
    file_out = folder / "from_the_file"
    path = write_experiment(folder, LOCAL.format(file_out=file_out.as_posix()))
    code = main(["run", str(path), "--quiet"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    header = read_records(file_out / "records.jsonl").header
    assert [j.spec for j in header.judges] == LOCAL_NAMES
    assert header.dataset.n == 8          # the 8 test rows (sample = 8 of 8; the 4 dev rows calibrate)


# 3. Bad experiment files ---------------------------------------------------------------------------------------

QUIP = '[judges.quip]\nkind = "quip"\n'
DATA = '[data]\nfiles = ["legal.jsonl"]\n\n'

BAD_FILES = {
    # name: (the file's text, the text of the line at fault, words the message must hold)
    "unknown_kind": (DATA + '[judges.q]\nkind = "quipp"\nn = 11\n', 'kind = "quipp"', ["unknown judge 'quipp'"]),
    "unknown_setting": (DATA + QUIP + "n = 11\nsize = 3\n", "size = 3", ["no setting 'size'", "settings: n"]),
    "wrong_type": (DATA + QUIP + 'agg = "min"\nn = "21"\n', 'n = "21"', ["setting 'n'", "'21'"]),
    "missing_data_file": ('[data]\nseed = 1\nfiles = ["nowhere.jsonl"]\n\n' + QUIP, "files =",
                          ["no such file or folder 'nowhere.jsonl'"]),
    "missing_calibration_file": (DATA.rstrip("\n") + '\ncalibrate_on = ["dev.jsonl"]\n\n' + QUIP, "calibrate_on",
                                 ["calibrate_on", "'dev.jsonl'"]),
    "matrix_unknown_key": (DATA + QUIP + "threshold = 0.2\nmatrix = { size = [1, 2] }\n", "matrix =",
                           ["matrix", "size"]),
    "matrix_bad_value": (DATA + QUIP + 'matrix = { n = [11, "x"] }\n', "matrix =", ["setting 'n'", "'x'"]),
    "table_twice": (DATA + QUIP + "n = 11\n\n" + QUIP, "[judges.quip]#2", ["twice"]),
    "expansion_name_taken_before": (DATA + '[judges."quip[n=11]"]\nkind = "quip"\n\n' + QUIP
                                    + "matrix = { n = [11, 21] }\n", "[judges.quip]", ["'quip[n=11]'", "twice"]),
    "expansion_name_taken_after": (DATA + QUIP + "matrix = { n = [11, 21] }\n\n"
                                   + '[judges."quip[n=11]"]\nkind = "quip"\n', '[judges."quip[n=11]"]',
                                   ["'quip[n=11]'", "twice"]),
    "quoted_table_bad_setting": (DATA + QUIP + 'n = 11\n\n[judges."quip[x]"]\nkind = "quip"\nn = "3"\n', 'n = "3"',
                                 ["setting 'n'", "'3'"]),
    "unknown_section": ('[dat]\nfiles = ["legal.jsonl"]\n\n' + QUIP, "[dat]", ["unknown section [dat]"]),
    "unknown_data_key": (DATA.rstrip("\n") + "\nsampel = 3\n\n" + QUIP, "sampel", ["[data] sampel: unknown key"]),
    "invalid_toml": (DATA + QUIP + "n = = 11\n", "n = = 11", ["not valid TOML"]),
    "bad_choice": (DATA + QUIP + 'agg = "max"\n', 'agg = "max"', ["setting 'agg'", "mean, min"]),
    "zero_repeats": (DATA + '[judges.direct]\nkind = "direct"\nmodel = "openai/gpt-4o-mini"\nrepeats = 0\n',
                     "repeats = 0", ["setting 'repeats'"]),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_experiment_file_is_one_line_at_the_right_line(folder, capsys, case):
    text, at, words = BAD_FILES[case]
    path = write_experiment(folder, text)
    snippet, _, occurrence = at.partition("#")
    line = line_of(path, snippet, int(occurrence or 1))
    out = folder / "run"
    assert main(["run", str(path), "--out", str(out), "--quiet", "--dev-fraction", "0"]) == 2
    error = one_error_line(capsys)
    assert error.startswith(f"error: {path}:{line}: "), (error, line)
    for word in words:
        assert word in error, error
    assert not out.exists()
    with pytest.raises(ExperimentError, match=f"^{path}:{line}: "):  # the same error through the Python API
        load_experiment(path)


def test_a_judge_flag_named_like_an_experiment_judge_is_one_line(folder, capsys):
    path = write_experiment(folder, DATA + QUIP)
    out = folder / "run"
    assert main(["run", str(path), "--judge", "quip", "--out", str(out), "--quiet"]) == 2
    assert one_error_line(capsys) == "error: judge 'quip' is given twice (names must be unique)"
    assert not out.exists()


def test_an_experiment_file_with_other_data_files_is_one_line(folder, capsys):
    path = write_experiment(folder, DATA + QUIP)
    out = folder / "run"
    assert main(["run", str(path), str(folder / "legal.jsonl"), "--out", str(out)]) == 2
    assert one_error_line(capsys).startswith("error: an experiment file (.toml) is given alone")
    assert not out.exists()


def test_a_missing_experiment_file_is_one_line(folder, capsys):
    out = folder / "run"
    assert main(["run", str(folder / "nothing.toml"), "--out", str(out)]) == 2
    assert one_error_line(capsys) == f"error: {folder / 'nothing.toml'}: no such experiment file"
    assert not out.exists()


# 4. Spec strings and Python configs ----------------------------------------------------------------------------

def test_a_list_setting_in_a_spec_string():
    config = JudgeConfig.from_spec("views:models=[a/b, c/d]")
    assert config.kind == "views" and config.settings["models"] == ("a/b", "c/d")
    assert JudgeConfig.from_spec("views:models=a/b").settings["models"] == ("a/b",)


def test_the_old_semicolon_list_is_an_error_naming_the_new_form():
    with pytest.raises(SettingError, match=r"\[A, B\]") as raised:
        JudgeConfig.from_spec("views:models=a;b")
    assert raised.value.key == "models"


def test_a_fallback_spec_with_an_inner_judge_in_braces_builds():
    judge, spec = build_judge("fallback:primary={claims:model=m,against=context},secondary=quip:n=8")
    assert judge._primary.against == "context" and judge._primary.model == "m"
    assert judge._secondary.n == 8
    assert spec.name == "fallback" and spec.spec.startswith("fallback:primary={")


def test_an_inner_judge_as_a_dict_builds():
    config = JudgeConfig.create("fallback", primary={"kind": "claims", "against": "context"})
    judge = config.build()
    assert judge._primary.against == "context"
    assert type(judge._secondary).name == "quip"


def test_an_inner_judge_dict_is_checked():
    with pytest.raises(SpecError, match="against"):
        JudgeConfig.create("fallback", primary={"kind": "claims", "against": "everything"}).build()


def test_python_configs_are_strict_and_spec_strings_lenient():
    with pytest.raises(SettingError) as raised:
        JudgeConfig.create("quip", n="11")
    assert raised.value.key == "n"
    config = JudgeConfig.from_spec("quip:n=11")
    assert config.settings["n"] == 11 and type(config.settings["n"]) is int
    assert JudgeConfig.create("quip", n=11).settings == {"n": 11}
    with pytest.raises(SpecError, match="unknown judge 'quipp'"):
        JudgeConfig.from_spec("quipp:n=11")


# 5. groundjudge prompts ----------------------------------------------------------------------------------------

def test_prompts_lists_claims_verify_with_its_judges_and_variables(capsys):
    assert main(["prompts"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "claims_verify" in line and "claims" in line.split("│")[2])
    cells = [cell.strip() for cell in row.split("│")]
    assert cells[1] == "claims_verify"
    assert "claims" in cells[2].split(", ")
    variables = PromptLibrary().variables("claims_verify")
    assert {"claims", "context", "facts"} <= set(variables)
    assert cells[4] == ", ".join(variables)
    assert "variables" in out


def test_prompts_copy_to_copies_the_template_and_its_partial(tmp_path, capsys):
    target = tmp_path / "mine"
    assert main(["prompts", "--copy-to", str(target), "claims_verify"]) == 0
    assert "copied 3 file(s)" in capsys.readouterr().out
    copied = sorted(p.name for p in target.iterdir())
    assert copied == ["_blocks.j2", "claims_verify.system.j2", "claims_verify.user.j2"]
    for name in copied:
        assert (target / name).read_bytes() == (PACKAGE_PROMPTS / name).read_bytes()
    # again: nothing is overwritten
    (target / "claims_verify.system.j2").write_text("mine\n", encoding="utf-8")
    assert main(["prompts", "--copy-to", str(target), "claims_verify"]) == 0
    assert "copied 0 file(s)" in capsys.readouterr().out
    assert (target / "claims_verify.system.j2").read_text(encoding="utf-8") == "mine\n"


def test_prompts_copy_of_an_unknown_name_is_one_line(tmp_path, capsys):
    target = tmp_path / "mine"
    assert main(["prompts", "--copy-to", str(target), "claims_verfy"]) == 2
    error = one_error_line(capsys)
    assert error.startswith("error: no prompt 'claims_verfy'; prompts: ") and "claims_verify" in error
    assert not target.exists()


def test_prompt_names_without_copy_to_are_one_line(capsys):
    assert main(["prompts", "claims_verify"]) == 2
    assert one_error_line(capsys) == "error: prompt names go with --copy-to DIR"


def test_the_copied_folder_is_a_judge_prompts_folder(folder, capsys):
    target = folder / "prompts" / "mine"
    assert main(["prompts", "--copy-to", str(target), "claims_verify"]) == 0
    capsys.readouterr()
    path = write_experiment(folder, DATA + '[judges.claims]\nkind = "claims"\nprompts = "prompts/mine"\n')
    assert load_experiment(path).judges[0].settings["prompts"] == str(target)
