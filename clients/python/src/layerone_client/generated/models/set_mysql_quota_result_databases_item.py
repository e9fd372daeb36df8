from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetMysqlQuotaResultDatabasesItem")


@_attrs_define
class SetMysqlQuotaResultDatabasesItem:
    """
    Attributes:
        database (str): The database's resource id.
        name (str):
        size_bytes (int):
    """

    database: str
    name: str
    size_bytes: int

    def to_dict(self) -> dict[str, Any]:
        database = self.database

        name = self.name

        size_bytes = self.size_bytes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "database": database,
                "name": name,
                "size_bytes": size_bytes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        database = d.pop("database")

        name = d.pop("name")

        size_bytes = d.pop("size_bytes")

        set_mysql_quota_result_databases_item = cls(
            database=database,
            name=name,
            size_bytes=size_bytes,
        )

        return set_mysql_quota_result_databases_item
