"""`python -m tui [SNIPPET]`: the app without the project's CLI, for development."""

from __future__ import annotations

import sys

from tui.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else None, {}))
