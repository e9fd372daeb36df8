from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetSudoAllowlistRequest")


@_attrs_define
class SetSudoAllowlistRequest:
    """Install the node's sudo allowlist.

    Attributes:
        generation (int): Greater than the generation of the allowlist installed now, or the request is refused.
        id (str): The allowlist's id; a node has one, and every later request names the same id.
        users (list[str]): The administrators allowed to use sudo: local users in the platform's admin group
            with a UID in the login range. Empty: no member of the admin group may use sudo.
    """

    generation: int
    id: str
    users: list[str]

    def to_dict(self) -> dict[str, Any]:
        generation = self.generation

        id = self.id

        users = self.users

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "generation": generation,
                "id": id,
                "users": users,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        generation = d.pop("generation")

        id = d.pop("id")

        users = cast(list[str], d.pop("users"))

        set_sudo_allowlist_request = cls(
            generation=generation,
            id=id,
            users=users,
        )

        return set_sudo_allowlist_request
