from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetMysqlQuotaRequest")


@_attrs_define
class SetMysqlQuotaRequest:
    """The account's MySQL limit. `id` is the account's id: one quota per account.

    Attributes:
        id (str): The account.
        quota_mib (int): Total size of the account's databases in MiB; 0: unlimited.
    """

    id: str
    quota_mib: int

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        quota_mib = self.quota_mib

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "id": id,
                "quota_mib": quota_mib,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        id = d.pop("id")

        quota_mib = d.pop("quota_mib")

        set_mysql_quota_request = cls(
            id=id,
            quota_mib=quota_mib,
        )

        return set_mysql_quota_request
