from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.ensure_mysql_grant_request_privileges import (
    EnsureMysqlGrantRequestPrivileges,
)

T = TypeVar("T", bound="EnsureMysqlGrantRequest")


@_attrs_define
class EnsureMysqlGrantRequest:
    """
    Attributes:
        account (str):
        database (str): The resource id of one of the account's databases.
        id (str):
        privileges (EnsureMysqlGrantRequestPrivileges): What a MariaDB user may do in one database.

            - `read_only`: SELECT, SHOW VIEW, LOCK TABLES.
            - `read_write`: `read_only` plus INSERT, UPDATE, DELETE, CREATE TEMPORARY TABLES, EXECUTE.
            - `all`: `read_write` plus CREATE, DROP, ALTER, INDEX, REFERENCES, CREATE VIEW, CREATE ROUTINE,
            ALTER ROUTINE, EVENT, TRIGGER: everything on the database, nothing beyond it.
        user (str): The resource id of one of the account's MariaDB users.
    """

    account: str
    database: str
    id: str
    privileges: EnsureMysqlGrantRequestPrivileges
    user: str

    def to_dict(self) -> dict[str, Any]:
        account = self.account

        database = self.database

        id = self.id

        privileges = self.privileges.value

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

        privileges = EnsureMysqlGrantRequestPrivileges(d.pop("privileges"))

        user = d.pop("user")

        ensure_mysql_grant_request = cls(
            account=account,
            database=database,
            id=id,
            privileges=privileges,
            user=user,
        )

        return ensure_mysql_grant_request
