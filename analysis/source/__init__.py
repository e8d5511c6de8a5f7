"""Source files: reading, parsing (with recovery), import resolution, positions."""
