"""Known mechanisms and the papers' results: closed forms, baselines, selection, partitions, counts, composition.

* :mod:`~optnoise.mechanisms.closed_form`: Kadam et al. (2024): closed-form staircase optima
* :mod:`~optnoise.mechanisms.baselines`: the baselines of Kadam et al. and their calibration
* :mod:`~optnoise.mechanisms.selection`: exponential mechanism, permute-and-flip, report-noisy-max
* :mod:`~optnoise.mechanisms.lattice`: the permute-and-flip lattice LP
* :mod:`~optnoise.mechanisms.partition`: partition selection (Desfontaines et al. 2022)
* :mod:`~optnoise.mechanisms.partition_lp`: partition-selection primitives as LPs
* :mod:`~optnoise.mechanisms.count`: count-query noise (Sadeghi et al. 2020)
* :mod:`~optnoise.mechanisms.composition`: composition theorems (Cesar and Rogers 2021)
* :mod:`~optnoise.mechanisms.gaussian`: Gaussian mechanisms of the composition paper
"""
