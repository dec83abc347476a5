"""Terminal output: streamed text, tool lines, listings, spinner, colour; errors in CLI terms."""
