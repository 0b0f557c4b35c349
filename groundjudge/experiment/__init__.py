"""Experiment files: data and named judges (with matrices of variants) in TOML, checked before any work."""

from groundjudge.experiment.load import Experiment, ExperimentError, load_experiment

__all__ = ["Experiment", "ExperimentError", "load_experiment"]
