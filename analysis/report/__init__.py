"""The audit report: `gradaudit audit` (Markdown, JSON, HTML)."""
