"""The Textual front end. Only this package (and ebtui.cli) may import textual or rich."""
