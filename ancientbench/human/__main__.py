"""``python -m ancientbench.human``: the same as ``ancientbench human``."""

import sys

from .command import main

sys.exit(main())
