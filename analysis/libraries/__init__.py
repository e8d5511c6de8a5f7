"""Installed libraries: finding them, reading their models, framework training loops."""
