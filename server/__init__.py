"""The gradaudit language server (pygls): diagnostics, quick fixes, code lens and hover."""
