import sys

from fluxplane.cli import entry

sys.exit(entry())
