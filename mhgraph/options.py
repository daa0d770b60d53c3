"""Options of one retrieval method: a frozen, validated pydantic class per method.

Each method declares its options once, with help text on every field (`option(...)`); its CLI
flag, environment variables, TOML key and the configuration page are derived from that
declaration:

- flag: `--<method>-<field>` with dashes, unless the field names its own (`flag="--hops"`); a
  flag that several methods declare sets the option of each of them;
- environment: `MHGRAPH_<METHOD>_<FIELD>`, then any older names the field lists (`env=`);
- TOML: the table `[<method>]` of the config file, key `<field>`; an older flat key the field
  lists (`legacy=`) still works, with a deprecation warning. A field that is itself a table
  (a dict, e.g. compose's named pipelines) is set in the config file only: it has no flag or
  environment variable.

Resolution order: flags > environment > config file > defaults. A bad value is one line naming
the setting, where the value came from and what is allowed.
"""

from __future__ import annotations

import os
import types
import typing
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mhgraph.errors import MhgraphError


class MethodOptions(BaseModel):
    """Base of every method's options: frozen, unknown fields rejected, defaults validated."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    def own_defaults(self) -> dict[str, tuple[Any, str]]:
        """Values these options set themselves where no flag, environment variable or config file
        set them (a shipped pipeline's options), by field, each with its origin; none here."""
        return {}


def option(default: Any, help: str, *, flag: str | None = None, env: Sequence[str] = (),
           legacy: Sequence[str] = (), **constraints: Any) -> Any:
    """A method option's field: its default, help text (shown by --help, `mhgraph config` and the
    configuration page), an explicit flag, older environment variable names and older flat TOML
    keys that still set it, and pydantic constraints (ge, le, ...)."""
    return Field(default, description=help,
                 json_schema_extra={"flag": flag, "env": list(env), "legacy": list(legacy)}, **constraints)


@dataclass(frozen=True)
class OptionInfo:
    """Everything the CLI, the environment, the config file and the docs need about one option."""

    method: str
    name: str
    help: str
    default: Any
    annotation: Any
    flag: str
    envs: tuple[str, ...]      # the first is MHGRAPH_<METHOD>_<FIELD>
    legacy: tuple[str, ...]    # older flat TOML keys
    constraints: Mapping[str, Any]

    @property
    def key(self) -> str:
        return f"{self.method}.{self.name}"

    @property
    def choices(self) -> tuple[Any, ...] | None:
        values = _literal_values(self.annotation)
        return tuple(values) if values else None

    @property
    def base_type(self) -> type:
        """bool, int, float or str: the type a flag or environment value is read as."""
        for t in _non_none(self.annotation):
            if t in (bool, int, float, str):
                return t
            if _literal_values(t):
                return type(_literal_values(t)[0])
        return str

    @property
    def optional(self) -> bool:
        return type(None) in _args(self.annotation)

    @property
    def config_only(self) -> bool:
        """A table of values (e.g. named pipelines): set in the config file only, no flag or variable."""
        return any(typing.get_origin(a) is dict or a is dict for a in _non_none(self.annotation))


def _args(annotation: Any) -> tuple[Any, ...]:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return typing.get_args(annotation)
    return (annotation,)


def _non_none(annotation: Any) -> list[Any]:
    return [a for a in _args(annotation) if a is not type(None)]


def _literal_values(annotation: Any) -> tuple[Any, ...]:
    for a in _non_none(annotation):
        if typing.get_origin(a) is Literal:
            return typing.get_args(a)
    return ()


def method_env_prefix(method: str) -> str:
    return "MHGRAPH_" + method.upper().replace("-", "_") + "_"


def option_infos(method: str, cls: type[MethodOptions]) -> list[OptionInfo]:
    """The options of `method` in declaration order."""
    out = []
    for name, f in cls.model_fields.items():
        extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
        constraints = {}
        for meta in f.metadata:
            for key in ("ge", "gt", "le", "lt"):
                if getattr(meta, key, None) is not None:
                    constraints[key] = getattr(meta, key)
        out.append(OptionInfo(
            method=method, name=name, help=f.description or "", default=f.default, annotation=f.annotation,
            flag=extra.get("flag") or f"--{method}-{name}".replace("_", "-"),
            envs=(method_env_prefix(method) + name.upper(), *extra.get("env", ())),
            legacy=tuple(extra.get("legacy", ())), constraints=constraints))
    return out


@dataclass(frozen=True)
class OptionSources:
    """Where method options come from, read once by `mhgraph.config.load_settings`: the flags
    given on the command line (method -> field -> value), the config file's tables and its other
    top-level keys (older flat keys of method options, or unknown ones)."""

    flags: Mapping[str, Mapping[str, Any]]
    tables: Mapping[str, Mapping[str, Any]]
    flat: Mapping[str, Any]
    path: Path | None = None


def resolve(method: str, cls: type[MethodOptions], sources: OptionSources,
            environ: Mapping[str, str] | None = None) -> tuple[MethodOptions, dict[str, str]]:
    """The options of `method` and where each value came from ("flag", "env", "file", "default")."""
    environ = os.environ if environ is None else environ
    flags = sources.flags.get(method, {})
    table = sources.tables.get(method, {})
    infos = option_infos(method, cls)
    known = {i.name for i in infos}
    if unknown := sorted(set(table) - known):
        raise MhgraphError(f"{sources.path}: unknown option '{unknown[0]}' in table [{method}] "
                           f"(known: {', '.join(sorted(known))})")
    values: dict[str, Any] = {}
    origins: dict[str, str] = {}
    where: dict[str, str] = {}
    for info in infos:
        env_name = None if info.config_only else next((e for e in info.envs if environ.get(e)), None)
        legacy = next((k for k in info.legacy if k in sources.flat), None)
        if flags.get(info.name) is not None:
            values[info.name], origins[info.name], where[info.name] = flags[info.name], "flag", "flag"
        elif env_name:
            values[info.name], origins[info.name], where[info.name] = environ[env_name], "env", f"${env_name}"
        elif info.name in table:
            values[info.name], origins[info.name], where[info.name] = table[info.name], "file", str(sources.path)
        elif legacy:
            warnings.warn(f"{sources.path}: the key '{legacy}' is deprecated: write '{info.name}' in a "
                          f"[{method}] table", FutureWarning, stacklevel=2)
            values[info.name], origins[info.name], where[info.name] = sources.flat[legacy], "file", str(sources.path)
        else:
            origins[info.name] = "default"
        if info.optional and values.get(info.name) == "":
            values[info.name] = None
    try:
        return cls(**values), origins
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else "?"
        given = values.get(name, error.get("input"))
        raise MhgraphError(f"setting '{method}.{name}' from {where.get(name, 'default')}: "
                           f"{error['msg'].rstrip('.')}, got {given!r}") from None
    except MhgraphError as exc:   # a check across options (a model validator): name where each given one came from
        given = ", ".join(f"'{method}.{name}' from {origin}" for name, origin in where.items())
        raise MhgraphError(f"{exc} (settings: {given or 'the defaults'})") from None


def legacy_keys(infos: Sequence[OptionInfo]) -> set[str]:
    return {k for i in infos for k in i.legacy}
