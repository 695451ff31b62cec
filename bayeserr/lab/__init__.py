"""Top layer, the simulation lab (``docs/methods.md`` §8): evals with known truth
(:mod:`.simulate`), leaderboards with known truth for the ranking
(:mod:`.ranking`) and for the set tied with the best (:mod:`.best`), multi-task leaderboards read over tasks like these (:mod:`.tasks`), pass^k over repeated runs (:mod:`.reliability`), the release gate's size at the margin (:mod:`.gate`), the
confidence sequences' error over every look and the questions they save
(:mod:`.sequential`), the judge-scored evals' coverage of the human-scored
mean (:mod:`.judge`), and the published tables, figures and the calibration
page (:mod:`.publish`, with the studies' settings in :mod:`.settings` and the
number formats of the published sections in :mod:`.formats`; blocks of replicates run
over worker processes by :mod:`.blocks`)."""
