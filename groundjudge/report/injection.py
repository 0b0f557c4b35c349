"""The report's prompt-injection tables: how often each judge flagged suspected injections, and, on an attack
battery's data, how often an attack flipped a verdict, was detected or made the judge abstain.

Read from each judge's recomputed summary (``suspected_injection`` and ``attacks``, see
:mod:`groundjudge.runs.injection`); shown only when a judge flagged something or ran on a battery.
"""

from __future__ import annotations

from typing import Any

from groundjudge.report.compare import Comparison, ranked

FLAGS_NOTE = (
    "Verdicts whose judge found text that addresses the judge instead of the reader (a reviewer's note, a fake "
    "system line, a ready-made verdict, an encoded instruction, ...). Flagged: verdicts with at least one such "
    "span, of all the judge judged, with the Wilson 95% interval. False alarms: the flagged share of the answers "
    "that are not attacks (every answer outside an attack battery, a battery's plain copies). Per style: "
    "verdicts with a span of that style (share of all verdicts); a verdict may count under several styles. "
    "Actions: what the judge did (flag: judged as is; strip: judged with the spans cut out; abstain; route: "
    "handed to a local judge)."
)

ATTACKS_NOTE = (
    "Each attacked answer is an ungrounded answer of the battery with one attack sentence added, paired with its "
    "plain copy. Flip rate: of the attacked answers whose plain copy the judge called ungrounded, the share it "
    "called grounded once attacked (lower is better; flipped: k/n). Judged grounded: all attacked answers judged "
    "grounded, whatever the plain verdict. Detected: a flagged span overlaps the attack sentence. Abstentions are "
    "never grounded. Plain false alarms: the judge's plain copies flagged (on its all-styles row). Brackets: "
    "Wilson 95% intervals."
)

ALL_STYLES = "all styles"
"""The style cell of a judge's row over every attack style."""


def rate_ci(r: dict[str, Any] | None) -> str:
    """A :func:`groundjudge.runs.injection.rate` as ``0.250 [0.10, 0.49]``; ``-`` when there is nothing to rate."""
    if not r or r.get("rate") is None:
        return "-"
    lo, hi = r["ci95"]
    return f"{r['rate']:.3f} [{lo:.2f}, {hi:.2f}]"


def share(r: dict[str, Any] | None) -> str:
    """A rate as ``0.25 (2/8)``; ``-`` when there is nothing to rate."""
    if not r or r.get("rate") is None:
        return "-"
    return f"{r['rate']:.2f} ({r['k']}/{r['n']})"


def count(r: dict[str, Any] | None) -> str:
    """A rate's ``k/n``; ``-`` when there is nothing to rate."""
    return "-" if not r or not r.get("n") else f"{r['k']}/{r['n']}"


def _tally(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "-"


def _style_cell(flags: dict[str, Any], style: str) -> str:
    k, n = flags["by_style"].get(style, 0), flags["flagged"]["n"]
    return f"{k} ({k / n:.2f})" if k and n else "0"


def flags_table(comparison: Comparison) -> list[dict[str, Any]]:
    """Per judge with a ``suspected_injection`` summary: flagged count and share, false alarms, actions, where the
    spans were, and verdicts flagged per style (report table data; none when no judge has one)."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("suspected_injection")]
    if not keys:
        return []
    flags = {k: comparison.judges[k]["suspected_injection"] for k in keys}
    styles = sorted({style for f in flags.values() for style in f["by_style"]})
    rows = [[comparison.labels[k], count(f["flagged"]), rate_ci(f["flagged"]), count(f["false_alarm"]),
             rate_ci(f["false_alarm"]), _tally(f["by_action"]), _tally(f["by_field"]),
             *(_style_cell(f, style) for style in styles)] for k, f in flags.items()]
    return [{"id": "injection-flags", "keys": keys, "title": "Suspected prompt injections", "note": FLAGS_NOTE,
             "headers": ["judge", "flagged", "flagged share [95% CI]", "false alarms", "false-alarm rate [95% CI]",
                         "actions", "found in", *styles], "rows": rows}]


def _attack_row(label: str, style: str, figures: dict[str, Any], false_alarm: str) -> list[str]:
    return [label, style, str(figures["n"]), count(figures["flip"]), rate_ci(figures["flip"]),
            share(figures["attacked_grounded"]), rate_ci(figures["detected"]), share(figures["abstained"]),
            false_alarm]


def attacks_table(comparison: Comparison) -> list[dict[str, Any]]:
    """Per judge on an attack battery, over all styles then per style: flip rate, judged grounded, detected and
    abstained, with the false-alarm rate on its plain copies (report table data; none without a battery)."""
    keys = [k for k in ranked(comparison) if comparison.judges[k].get("attacks")]
    if not keys:
        return []
    rows, row_keys = [], []
    for key in keys:
        battery, label = comparison.judges[key]["attacks"], comparison.labels[key]
        rows.append(_attack_row(label, ALL_STYLES, battery["overall"], rate_ci(battery["false_alarm"])))
        rows += [_attack_row(label, style, figures, "-") for style, figures in battery["by_style"].items()]
        row_keys += [key] * (1 + len(battery["by_style"]))
    return [{"id": "injection-attacks", "keys": row_keys, "title": "Attack battery: flipped verdicts",
             "note": ATTACKS_NOTE,
             "headers": ["judge", "attack style", "attacked", "flipped", "flip rate [95% CI]", "judged grounded",
                         "detected [95% CI]", "abstained", "plain false alarms [95% CI]"], "rows": rows}]


def injection_tables(comparison: Comparison) -> list[dict[str, Any]]:
    """The prompt-injection tables as report table data (id, keys, title, note, headers, rows): flags per judge
    when any judge flagged a span or ran on a battery, the attack battery's figures when one did; else none."""
    return [*flags_table(comparison), *attacks_table(comparison)]
