"""Bash command lines as permission rules see them: the grammar, words, the deny-list."""
