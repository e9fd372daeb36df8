from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

T = TypeVar("T", bound="EnsureMysqlGrantRequest")


@_attrs_define
class EnsureMysqlGrantRequest:
    """
    Attributes:
        account (str):
        database (str): The resource id of one of the account's databases.
        id (str):
        privileges (Literal['all'] | Literal['read_only'] | Literal['read_write']): What a MariaDB user may do in one
            database.
        user (str): The resource id of one of the account's MariaDB users.
    """

    account: str
    database: str
    id: str
    privileges: Literal["all", "read_only", "read_write"]
    user: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        database = self.database

        id = self.id

        privileges: Literal["all", "read_only", "read_write"]
        privileges = self.privileges

        user = self.user

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "account": account,
                "database": database,
                "id": id,
                "privileges": privileges,
                "user": user,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account = d.pop("account")

        database = d.pop("database")

        id = d.pop("id")

        def _parse_privileges(
            data: object,
        ) -> Literal["all", "read_only", "read_write"]:
            privileges_type_0 = cast(Literal["read_only"], data)
            if privileges_type_0 != "read_only":
                raise ValueError(
                    f"privileges_type_0 must match const 'read_only', got '{privileges_type_0}'"
                )
            return privileges_type_0
            privileges_type_1 = cast(Literal["read_write"], data)
            if privileges_type_1 != "read_write":
                raise ValueError(
                    f"privileges_type_1 must match const 'read_write', got '{privileges_type_1}'"
                )
            return privileges_type_1
            privileges_type_2 = cast(Literal["all"], data)
            if privileges_type_2 != "all":
                raise ValueError(
                    f"privileges_type_2 must match const 'all', got '{privileges_type_2}'"
                )
            return privileges_type_2

        privileges = _parse_privileges(d.pop("privileges"))

        user = d.pop("user")

        ensure_mysql_grant_request = cls(
            account=account,
            database=database,
            id=id,
            privileges=privileges,
            user=user,
        )

        return ensure_mysql_grant_request
