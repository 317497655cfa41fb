"""What a change does, before it merges: diff (object by object, per cluster), plan (per AWS account and
cluster), versions (what each pack can be upgraded to) and the fleet's pages (site)."""
