"""``python -m optnoise.cli``: the ``optnoise`` command without the installed script."""

from optnoise.cli.main import main

raise SystemExit(main())
