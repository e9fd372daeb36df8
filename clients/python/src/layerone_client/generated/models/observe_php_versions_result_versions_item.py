from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ObservePhpVersionsResultVersionsItem")


@_attrs_define
class ObservePhpVersionsResultVersionsItem:
    """
    Attributes:
        cli (bool): Whether its command-line PHP exists too (scheduled PHP scripts need it).
        extensions (list[str]): The modules it loads (`php-fpmX.Y -m`), lowercased; empty with `error` set when the
            binary would not list them.
        fpm (str): The FPM binary found.
        version (str): `8.2`.
        error (None | str | Unset):
    """

    cli: bool
    extensions: list[str]
    fpm: str
    version: str
    error: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cli = self.cli

        extensions = self.extensions

        fpm = self.fpm

        version = self.version

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cli": cli,
                "extensions": extensions,
                "fpm": fpm,
                "version": version,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cli = d.pop("cli")

        extensions = cast(list[str], d.pop("extensions"))

        fpm = d.pop("fpm")

        version = d.pop("version")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        observe_php_versions_result_versions_item = cls(
            cli=cli,
            extensions=extensions,
            fpm=fpm,
            version=version,
            error=error,
        )

        return observe_php_versions_result_versions_item
