import sys

from playground.cli.entry import main

sys.exit(main())
