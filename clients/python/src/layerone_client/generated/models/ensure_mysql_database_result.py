from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_mysql_database_result_state import EnsureMysqlDatabaseResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureMysqlDatabaseResult")


@_attrs_define
class EnsureMysqlDatabaseResult:
    """A database as MariaDB shows it after the change.

    Attributes:
        state (EnsureMysqlDatabaseResultState): Whether a resource exists after an operation: what the OS shows, not
            what was asked.
        charset (None | str | Unset):
        collation (None | str | Unset):
        name (None | str | Unset): The full name in MariaDB.
        size_bytes (int | None | Unset):
    """

    state: EnsureMysqlDatabaseResultState
    charset: None | str | Unset = UNSET
    collation: None | str | Unset = UNSET
    name: None | str | Unset = UNSET
    size_bytes: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        charset: None | str | Unset
        if isinstance(self.charset, Unset):
            charset = UNSET
        else:
            charset = self.charset

        collation: None | str | Unset
        if isinstance(self.collation, Unset):
            collation = UNSET
        else:
            collation = self.collation

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        size_bytes: int | None | Unset
        if isinstance(self.size_bytes, Unset):
            size_bytes = UNSET
        else:
            size_bytes = self.size_bytes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "state": state,
            }
        )
        if charset is not UNSET:
            field_dict["charset"] = charset
        if collation is not UNSET:
            field_dict["collation"] = collation
        if name is not UNSET:
            field_dict["name"] = name
        if size_bytes is not UNSET:
            field_dict["size_bytes"] = size_bytes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        state = EnsureMysqlDatabaseResultState(d.pop("state"))

        def _parse_charset(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        charset = _parse_charset(d.pop("charset", UNSET))

        def _parse_collation(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        collation = _parse_collation(d.pop("collation", UNSET))

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_size_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        size_bytes = _parse_size_bytes(d.pop("size_bytes", UNSET))

        ensure_mysql_database_result = cls(
            state=state,
            charset=charset,
            collation=collation,
            name=name,
            size_bytes=size_bytes,
        )

        return ensure_mysql_database_result
