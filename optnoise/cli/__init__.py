"""The ``optnoise`` command line: one module per command family (see :mod:`optnoise.cli.main`)."""

from optnoise.cli.main import build_parser, main

__all__ = ["main", "build_parser"]
