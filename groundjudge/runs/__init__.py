"""Running judges over examples: the runner, the append-only records, calibration on dev, metrics and the summary."""
