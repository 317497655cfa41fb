"""Tests of the fleet pages (fluxplane.review.site), one module per source module."""
