"""``python -m anoncore.cli``: the same as the ``anoncore`` command."""

import sys

from anoncore.cli import main

sys.exit(main())
