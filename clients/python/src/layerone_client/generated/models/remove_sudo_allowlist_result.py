from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_sudo_allowlist_result_state import RemoveSudoAllowlistResultState

T = TypeVar("T", bound="RemoveSudoAllowlistResult")


@_attrs_define
class RemoveSudoAllowlistResult:
    """The allowlist as the node now has it.

    Attributes:
        admin_group (str): The admin group the drop-in restricts (`sudo` or `wheel`).
        generation (int): The generation now in effect.
        state (RemoveSudoAllowlistResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        users (list[str]): The users the installed drop-in allows (empty when absent).
    """

    admin_group: str
    generation: int
    state: RemoveSudoAllowlistResultState
    users: list[str]

    def to_dict(self) -> dict[str, Any]:
        admin_group = self.admin_group

        generation = self.generation

        state = self.state.value

        users = self.users

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "admin_group": admin_group,
                "generation": generation,
                "state": state,
                "users": users,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        admin_group = d.pop("admin_group")

        generation = d.pop("generation")

        state = RemoveSudoAllowlistResultState(d.pop("state"))

        users = cast(list[str], d.pop("users"))

        remove_sudo_allowlist_result = cls(
            admin_group=admin_group,
            generation=generation,
            state=state,
            users=users,
        )

        return remove_sudo_allowlist_result
