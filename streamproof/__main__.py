"""``python -m streamproof``: the same as the ``streamproof`` command."""

import sys

from streamproof.main import main

sys.exit(main())
