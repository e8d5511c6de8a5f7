"""Checking files: configuration, discovery, the analyzer, suppression, fixes, the run over many files."""
