from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define

if TYPE_CHECKING:
    from ..models.set_mysql_quota_result_databases_item import (
        SetMysqlQuotaResultDatabasesItem,
    )


T = TypeVar("T", bound="SetMysqlQuotaResult")


@_attrs_define
class SetMysqlQuotaResult:
    """The account's MySQL usage and what the quota does about it.

    Attributes:
        databases (list[SetMysqlQuotaResultDatabasesItem]):
        quota_mib (int): 0: unlimited.
        total_bytes (int):
        writes_revoked (bool): Whether the account's users are now without write privileges.
    """

    databases: list[SetMysqlQuotaResultDatabasesItem]
    quota_mib: int
    total_bytes: int
    writes_revoked: bool

    def to_dict(self) -> dict[str, Any]:
        databases = []
        for databases_item_data in self.databases:
            databases_item = databases_item_data.to_dict()
            databases.append(databases_item)

        quota_mib = self.quota_mib

        total_bytes = self.total_bytes

        writes_revoked = self.writes_revoked

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "databases": databases,
                "quota_mib": quota_mib,
                "total_bytes": total_bytes,
                "writes_revoked": writes_revoked,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_mysql_quota_result_databases_item import (
            SetMysqlQuotaResultDatabasesItem,
        )

        d = dict(src_dict)
        databases = []
        _databases = d.pop("databases")
        for databases_item_data in _databases:
            databases_item = SetMysqlQuotaResultDatabasesItem.from_dict(
                databases_item_data
            )

            databases.append(databases_item)

        quota_mib = d.pop("quota_mib")

        total_bytes = d.pop("total_bytes")

        writes_revoked = d.pop("writes_revoked")

        set_mysql_quota_result = cls(
            databases=databases,
            quota_mib=quota_mib,
            total_bytes=total_bytes,
            writes_revoked=writes_revoked,
        )

        return set_mysql_quota_result
