from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetPhpOptionsResultPoolsItem")


@_attrs_define
class SetPhpOptionsResultPoolsItem:
    """What an account's PHP looks like after a sync.

    Attributes:
        extensions (list[str]): The modules this version loads (`php-fpmX.Y -m`), lowercased.
        selector_extensions (list[str]): CloudLinux: the extensions set as the user's selection with `selectorctl
            --replace-user-extensions` (their command-line PHP and cron jobs); empty on Debian.
        socket (str): The pool's socket, which the account's vhosts of this version point at.
        version (str): `8.2`.
    """

    extensions: list[str]
    selector_extensions: list[str]
    socket: str
    version: str

    def to_dict(self) -> dict[str, Any]:
        extensions = self.extensions

        selector_extensions = self.selector_extensions

        socket = self.socket

        version = self.version

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "extensions": extensions,
                "selector_extensions": selector_extensions,
                "socket": socket,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        extensions = cast(list[str], d.pop("extensions"))

        selector_extensions = cast(list[str], d.pop("selector_extensions"))

        socket = d.pop("socket")

        version = d.pop("version")

        set_php_options_result_pools_item = cls(
            extensions=extensions,
            selector_extensions=selector_extensions,
            socket=socket,
            version=version,
        )

        return set_php_options_result_pools_item
