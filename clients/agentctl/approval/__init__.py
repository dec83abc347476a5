"""``--permission ask`` at the terminal: the preview of a call and the one-key question."""
