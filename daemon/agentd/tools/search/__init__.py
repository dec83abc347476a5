"""What grep and find are built on: walks, ignore rules, globs, the search backends."""
