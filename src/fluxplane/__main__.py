import sys

from fluxplane.cli import main

sys.exit(main())
