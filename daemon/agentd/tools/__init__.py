"""The tools the model touches the world with (see README.md in this folder)."""
