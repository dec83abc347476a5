"""How tool processes run: shells, spawning, process trees, output capture, confinement."""
