"""`python -m audit` runs the command line."""

import sys

from audit.cli.main import main

sys.exit(main())
