"""The schema mapping: the model (``model``) and where a run's mapping comes from (``presets``:
presets and mapping files).
"""
