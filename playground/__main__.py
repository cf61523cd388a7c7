import sys

from playground.cli.main import main

sys.exit(main())
