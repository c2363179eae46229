"""ebtui — an Ethics Bowl for language models, in the terminal."""

__version__ = "0.1.0"
