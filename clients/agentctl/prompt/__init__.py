"""What goes into a run: the prompt's words and piped input, images, the provider variables file."""
