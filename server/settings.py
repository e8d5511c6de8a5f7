"""Server settings: client settings (initializationOptions, didChangeConfiguration) merged with
the workspace's `[tool.gradaudit]`."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from gradaudit.analysis.config import Config, ConfigError, config_from_table, load_config

SEVERITIES = ("error", "warning", "information", "hint")


@dataclass(frozen=True)
class Settings:
    select: tuple = ()
    ignore: tuple = ()
    severity: dict = field(default_factory=dict, hash=False, compare=False)   # 'GA101'/'confirmed'/... -> name
    debounce_ms: int = 150
    code_lens: bool = True
    extra_paths: tuple = ()
    docs_url: str = ""          # e.g. 'https://example.org/rules/{code}'; default: local markdown files
    interpreter: str = ""       # the environment whose installed libraries are analysed (else the server's own)

    @staticmethod
    def from_client(raw, base: "Settings | None" = None) -> "Settings":
        """Read the client's settings; unknown keys are ignored, wrong types keep the old value."""
        base = base or Settings()
        if not isinstance(raw, dict):
            return base
        if isinstance(raw.get("gradaudit"), dict):
            raw = raw["gradaudit"]
        out = base

        def strings(v):
            if isinstance(v, str):
                return tuple(s.strip() for s in v.split(",") if s.strip())
            if isinstance(v, (list, tuple)):
                return tuple(str(s) for s in v if str(s).strip())
            return None

        for key, attr in (("select", "select"), ("ignore", "ignore"), ("extraPaths", "extra_paths")):
            if key in raw:
                v = strings(raw[key])
                if v is not None:
                    out = replace(out, **{attr: v})
        if isinstance(raw.get("severity"), dict):
            sev = {str(k): str(v).lower() for k, v in raw["severity"].items() if str(v).lower() in SEVERITIES}
            out = replace(out, severity=sev)
        if "debounce" in raw and isinstance(raw["debounce"], (int, float)) and raw["debounce"] >= 0:
            out = replace(out, debounce_ms=int(raw["debounce"]))
        if "codeLens" in raw and isinstance(raw["codeLens"], bool):
            out = replace(out, code_lens=raw["codeLens"])
        if "docsUrl" in raw and isinstance(raw["docsUrl"], str):
            out = replace(out, docs_url=raw["docsUrl"])
        for key in ("interpreter", "python"):
            if isinstance(raw.get(key), str):
                out = replace(out, interpreter=raw[key])
        return out

    def engine_config(self, path: str) -> tuple[Config, str | None]:
        """The engine configuration for a document: pyproject.toml, then the client's select/ignore."""
        error = None
        try:
            cfg = load_config(path)
        except ConfigError as exc:
            cfg, error = Config(), str(exc)
        if self.select or self.ignore:
            try:
                table = {"select": list(self.select) or list(cfg.select), "ignore": list(cfg.ignore + self.ignore)}
                client = config_from_table(table, cfg.root or ".", source="client settings")
                cfg = Config(client.select, client.ignore, cfg.per_file_ignores, cfg.exclude, cfg.root, cfg.severity)
            except ConfigError as exc:
                error = str(exc)
        return cfg, error
