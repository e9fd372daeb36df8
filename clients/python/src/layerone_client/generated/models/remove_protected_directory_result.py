from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.remove_protected_directory_result_state import (
    RemoveProtectedDirectoryResultState,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveProtectedDirectoryResult")


@_attrs_define
class RemoveProtectedDirectoryResult:
    """
    Attributes:
        state (RemoveProtectedDirectoryResultState): Whether a resource exists after an operation: what the OS shows,
            not what was asked.
        users (list[str]): The user names that may enter (hashes are never returned).
        directory (None | str | Unset): The absolute directory Apache protects.
    """

    state: RemoveProtectedDirectoryResultState
    users: list[str]
    directory: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        users = self.users

        directory: None | str | Unset
        if isinstance(self.directory, Unset):
            directory = UNSET
        else:
            directory = self.directory

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
                "users": users,
            }
        )
        if directory is not UNSET:
            field_dict["directory"] = directory

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        state = RemoveProtectedDirectoryResultState(d.pop("state"))

        users = cast(list[str], d.pop("users"))

        def _parse_directory(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        directory = _parse_directory(d.pop("directory", UNSET))

        remove_protected_directory_result = cls(
            state=state,
            users=users,
            directory=directory,
        )

        return remove_protected_directory_result
