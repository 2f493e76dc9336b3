"""Reproduction of the papers' figures: the conventions of ``experiments/``, its runner, the data sets."""
