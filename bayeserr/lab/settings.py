"""Settings of the published lab studies, kept light: the command line reads
them for its option defaults without importing the lab (pandas, the
simulations)."""

#: the few-cluster study (docs/calibration.md): cluster effects on the difference, gap, and the design
FEWCLUSTER_SETTINGS = dict(icc_diffs=(0.0, 0.02, 0.05, 0.1), gap=0.05, accuracy=0.6, icc=0.2, rho=0.7,
                           spread=1.0)
