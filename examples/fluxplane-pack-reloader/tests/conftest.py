"""The pack's tests run from a checkout without installing it: its src/ goes first on the import path.

An installed pack (``pip install -e .``) needs no such line; fluxplane's own test run, which collects these
tests too, does not install the example.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
