"""What the file tools are built on: safe opens, paths, atomic writes, history, diffs."""
