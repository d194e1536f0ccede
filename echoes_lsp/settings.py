"""Typed server settings from initializationOptions and `workspace/configuration` (section `echoes`).

Bad values are reported and replaced by defaults, never fatal.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .codes import CODES, SEVERITIES
from .diagnose import DEFAULT_LIMIT, Policy


@dataclass(frozen=True)
class Settings:
    python: Optional[str] = None
    timeout: float = 30.0
    debounce_ms: int = 150
    severity: Tuple[Tuple[str, str], ...] = ()
    secrets: bool = True
    exclude: Tuple[str, ...] = ()
    agent: str = "echoes-lsp"
    poll_interval: float = 2.0
    max_per_document: int = DEFAULT_LIMIT
    hydrate_on_save: bool = True
    errors: Tuple[str, ...] = field(default=(), compare=False)

    def policy(self) -> Policy:
        return Policy(severity=self.severity, secrets=self.secrets)


def _section(raw: Any) -> Mapping[str, Any]:
    """Accept both `{"echoes": {...}}` and the bare section, nested or dotted keys."""
    if not isinstance(raw, Mapping):
        return {}
    if "echoes" in raw and isinstance(raw["echoes"], Mapping):
        raw = raw["echoes"]
    flat: Dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key)
        if name.startswith("echoes."):
            name = name[len("echoes.") :]
        flat[name] = value
    return flat


def _get(data: Mapping[str, Any], dotted: str) -> Any:
    if dotted in data:
        return data[dotted]
    current: Any = data
    for part in dotted.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def parse_settings(raw: Any, base: Optional[Settings] = None) -> Settings:
    """Typed settings from a client's JSON; each bad value is named in `errors`."""
    data = _section(raw)
    settings = base or Settings()
    errors: List[str] = []
    changes: Dict[str, Any] = {}

    python = _get(data, "runtime.python")
    if python is not None:
        if isinstance(python, str):
            changes["python"] = python.strip() or None
        else:
            errors.append("echoes.runtime.python must be a string")

    timeout = _get(data, "runtime.timeout")
    if timeout is not None:
        if (
            isinstance(timeout, (int, float))
            and not isinstance(timeout, bool)
            and 0 < timeout <= 600
        ):
            changes["timeout"] = float(timeout)
        else:
            errors.append("echoes.runtime.timeout must be a number of seconds between 0 and 600")

    debounce = _get(data, "diagnostics.debounce")
    if debounce is not None:
        if (
            isinstance(debounce, (int, float))
            and not isinstance(debounce, bool)
            and 0 <= debounce <= 10000
        ):
            changes["debounce_ms"] = int(debounce)
        else:
            errors.append("echoes.diagnostics.debounce must be milliseconds between 0 and 10000")

    severity = _get(data, "diagnostics.severity")
    if severity is not None:
        if isinstance(severity, Mapping):
            pairs = []
            for code, level in severity.items():
                code_name = str(code).upper()
                if code_name not in CODES:
                    errors.append(f"echoes.diagnostics.severity: unknown code {code!r}")
                elif not isinstance(level, str) or level.lower() not in SEVERITIES:
                    errors.append(
                        f"echoes.diagnostics.severity.{code_name} must be one of "
                        + ", ".join(SEVERITIES)
                    )
                else:
                    pairs.append((code_name, level.lower()))
            changes["severity"] = tuple(sorted(pairs))
        else:
            errors.append("echoes.diagnostics.severity must be an object of code → level")

    secrets = _get(data, "secrets.enabled")
    if secrets is not None:
        if isinstance(secrets, bool):
            changes["secrets"] = secrets
        else:
            errors.append("echoes.secrets.enabled must be true or false")

    exclude = _get(data, "exclude")
    if exclude is not None:
        if isinstance(exclude, list) and all(isinstance(item, str) for item in exclude):
            changes["exclude"] = tuple(exclude)
        else:
            errors.append("echoes.exclude must be a list of glob strings")

    agent = _get(data, "agent")
    if agent is not None:
        if isinstance(agent, str) and agent.strip():
            changes["agent"] = agent.strip()
        else:
            errors.append("echoes.agent must be a non-empty string")

    poll = _get(data, "watch.pollInterval")
    if poll is not None:
        if isinstance(poll, (int, float)) and not isinstance(poll, bool) and 0 <= poll <= 3600:
            changes["poll_interval"] = float(poll)
        else:
            errors.append("echoes.watch.pollInterval must be seconds between 0 and 3600 (0 = off)")

    limit = _get(data, "diagnostics.maxPerDocument")
    if limit is not None:
        if isinstance(limit, int) and not isinstance(limit, bool) and 0 <= limit <= 1_000_000:
            changes["max_per_document"] = limit
        else:
            errors.append(
                "echoes.diagnostics.maxPerDocument must be a whole number from 0 (no limit) "
                "to 1000000"
            )
    hydrate = _get(data, "index.hydrateOnSave")
    if hydrate is not None:
        if isinstance(hydrate, bool):
            changes["hydrate_on_save"] = hydrate
        else:
            errors.append("echoes.index.hydrateOnSave must be true or false")

    return replace(settings, errors=tuple(errors), **changes)
