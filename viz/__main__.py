"""`python -m viz` is the `tinyviz` command."""
import sys
from viz.server.cli import main

sys.exit(main())
