import sys

from opspec.cli import main

sys.exit(main())
