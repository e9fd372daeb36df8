from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="RebuildAccountResult")


@_attrs_define
class RebuildAccountResult:
    """What `rebuild_account` re-derived.

    Attributes:
        home_recreated (bool): Whether the home had to be created again.
        replayed (list[str]): The requests replayed, in order: `family/operation/resource id`.
        username (str):
    """

    home_recreated: bool
    replayed: list[str]
    username: str

    def to_dict(self) -> dict[str, Any]:
        home_recreated = self.home_recreated

        replayed = self.replayed

        username = self.username

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "home_recreated": home_recreated,
                "replayed": replayed,
                "username": username,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        home_recreated = d.pop("home_recreated")

        replayed = cast(list[str], d.pop("replayed"))

        username = d.pop("username")

        rebuild_account_result = cls(
            home_recreated=home_recreated,
            replayed=replayed,
            username=username,
        )

        return rebuild_account_result
