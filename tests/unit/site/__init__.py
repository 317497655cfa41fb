"""Tests of the fleet pages (fluxplane.site), one module per source module."""
