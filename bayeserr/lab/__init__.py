"""Top layer, the simulation lab (``docs/methods.md`` §8): evals with known truth
(:mod:`.simulate`) and the published tables, figures and the calibration
page (:mod:`.publish`)."""
