from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_mysql_user_result_state import EnsureMysqlUserResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureMysqlUserResult")


@_attrs_define
class EnsureMysqlUserResult:
    """The user as MariaDB shows it after the change.

    Attributes:
        hosts (list[str]): The hosts MariaDB has the user at.
        state (EnsureMysqlUserResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        name (None | str | Unset): The full name in MariaDB.
    """

    hosts: list[str]
    state: EnsureMysqlUserResultState
    name: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        hosts = self.hosts

        state = self.state.value

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "hosts": hosts,
                "state": state,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        hosts = cast(list[str], d.pop("hosts"))

        state = EnsureMysqlUserResultState(d.pop("state"))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        ensure_mysql_user_result = cls(
            hosts=hosts,
            state=state,
            name=name,
        )

        return ensure_mysql_user_result
