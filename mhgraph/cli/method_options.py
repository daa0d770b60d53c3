"""Click flags generated from the registered methods' options classes, shared by query, ask and
eval: one flag per option (a flag several methods declare sets each of them), and `--method`
offering exactly the registered names."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import click

from mhgraph.config import Settings
from mhgraph.options import OptionInfo
from mhgraph.retrieval import registry

PREFIX = "method_option__"


def _flags(only: Sequence[str] | None = None) -> dict[str, list[OptionInfo]]:
    """flag -> the options it sets, in registry order (of the methods `only` names, if given)."""
    out: dict[str, list[OptionInfo]] = {}
    for spec in registry.specs() if only is None else map(registry.get, only):
        for info in spec.option_infos():
            if not info.config_only:
                out.setdefault(info.flag, []).append(info)
    return out


def _dest(flag: str) -> str:
    return PREFIX + flag.lstrip("-").replace("-", "_")


def _click_type(info: OptionInfo) -> Any:
    if info.choices:
        return click.Choice([str(c) for c in info.choices])
    c = info.constraints
    if info.base_type is int:
        return click.IntRange(min=c.get("ge"), max=c.get("le"))
    if info.base_type is float:
        return click.FloatRange(min=c.get("ge"), max=c.get("le"))
    return str


def _help(infos: list[OptionInfo]) -> str:
    first = infos[0]
    default = "" if first.default is None else f" (default {str(first.default).lower() if first.base_type is bool else first.default})"
    text = first.help.rstrip(".")
    if text[:2].istitle():   # "Hops." -> "hops", but not an acronym's "IR-CoT"
        text = text[0].lower() + text[1:]
    return f"{', '.join(i.method for i in infos)}: {text}{default}."


def method_options(command: Callable | None = None, *, only: Sequence[str] | None = None) -> Callable:
    """Add every method option's flag to `command` (of the methods `only` names, if given); used
    bare (@method_options) or called (@method_options(only=...))."""
    if command is None:
        return lambda c: method_options(c, only=only)
    for flag, infos in reversed(list(_flags(only).items())):
        info = infos[0]
        if info.base_type is bool:
            option = click.option(f"{flag}/--no-{flag[2:]}", _dest(flag), default=None, help=_help(infos))
        else:
            option = click.option(flag, _dest(flag), type=_click_type(info), default=None, help=_help(infos))
        command = option(command)
    return command


def method_choice(default: str | None = registry.DEFAULT_METHOD, help: str = "Retrieval method") -> Callable:
    """--method / -m: one of the registered methods."""
    return click.option("--method", "-m", type=click.Choice(registry.names()), default=default,
                        show_default=default is not None, help=f"{help} ('mhgraph methods' describes them).")


def pop_method_flags(kwargs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Take the generated flags out of a command's keyword arguments: method -> option -> value."""
    flags = _flags()
    out: dict[str, dict[str, Any]] = {}
    for flag, infos in flags.items():
        value = kwargs.pop(_dest(flag), None)
        if value is None:
            continue
        for info in infos:
            out.setdefault(info.method, {})[info.name] = value
    return out


def warn_of_unread_flags(settings: Settings, method: str) -> None:
    """A warning for each method flag this run ignores: every command takes every method's flags,
    and `method` reads only its own options and those of the methods it runs (a pipeline's stages),
    some of which it sets itself."""
    unread = registry.unread_flags(settings, method)
    if not unread:
        return
    read = registry.methods_read(settings, method)
    for flag, keys in unread.items():
        own = [key for key in keys if key.partition(".")[0] in read]
        why = [f"method '{method}' sets {', '.join(own)} itself (or leaves it unused)"] if own else []
        if others := [key for key in keys if key not in own]:
            why.append(f"{flag} sets {', '.join(others)}, and '{method}' reads the options of {', '.join(read)} only")
        warnings.warn(f"{flag} is ignored: {'; '.join(why)}", UserWarning, stacklevel=2)
