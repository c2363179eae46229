"""The human audit: a seeded random draw of judgments (`draw.py`), a person's blind scores of them kept in the
audit's own file (`records.py`; never in the judgment or its overrides), the headless sheet (`sheet.py`) and
the prediction-powered calibration of the report's model means to the human scale (`calibrate.py`).
The method and its validation: docs/STATISTICS.md, "Human audit"; for users: docs/AUDIT.md.
"""
