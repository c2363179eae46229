"""Data shipped inside the package: the built-in dilemma document and its editable source."""
