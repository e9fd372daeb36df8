from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.ensure_mysql_grant_result_state import EnsureMysqlGrantResultState
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnsureMysqlGrantResult")


@_attrs_define
class EnsureMysqlGrantResult:
    """The grant as MariaDB shows it after the change.

    Attributes:
        privileges (list[str]): The privileges MariaDB now shows for the user on the database (SQL spelling), at its
            first host.
        state (EnsureMysqlGrantResultState): Whether a resource exists after an operation: what the OS shows, not what
            was asked.
        writes_revoked (bool): Whether write privileges are held back because the account is over its quota.
        database (None | str | Unset):
        user (None | str | Unset):
    """

    privileges: list[str]
    state: EnsureMysqlGrantResultState
    writes_revoked: bool
    database: None | str | Unset = UNSET
    user: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        privileges = self.privileges

        state = self.state.value

        writes_revoked = self.writes_revoked

        database: None | str | Unset
        if isinstance(self.database, Unset):
            database = UNSET
        else:
            database = self.database

        user: None | str | Unset
        if isinstance(self.user, Unset):
            user = UNSET
        else:
            user = self.user

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "privileges": privileges,
                "state": state,
                "writes_revoked": writes_revoked,
            }
        )
        if database is not UNSET:
            field_dict["database"] = database
        if user is not UNSET:
            field_dict["user"] = user

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        privileges = cast(list[str], d.pop("privileges"))

        state = EnsureMysqlGrantResultState(d.pop("state"))

        writes_revoked = d.pop("writes_revoked")

        def _parse_database(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        database = _parse_database(d.pop("database", UNSET))

        def _parse_user(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        user = _parse_user(d.pop("user", UNSET))

        ensure_mysql_grant_result = cls(
            privileges=privileges,
            state=state,
            writes_revoked=writes_revoked,
            database=database,
            user=user,
        )

        return ensure_mysql_grant_result
