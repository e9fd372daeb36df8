from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.set_account_isolation_result_enforced_type_0 import (
        SetAccountIsolationResultEnforcedType0,
    )
    from ..models.set_account_isolation_result_limits_type_0 import (
        SetAccountIsolationResultLimitsType0,
    )
    from ..models.set_account_isolation_result_mysql_type_0 import (
        SetAccountIsolationResultMysqlType0,
    )


T = TypeVar("T", bound="SetAccountIsolationResult")


@_attrs_define
class SetAccountIsolationResult:
    """The account's limits and isolation after the change, read back from the platform.

    Attributes:
        username (str):
        cagefs (bool | None | Unset): Whether `cagefsctl --list-enabled` lists the user.
        enforced (None | SetAccountIsolationResultEnforcedType0 | Unset): On `debian`, whether this host enforces each
            limit; absent under LVE, which enforces
            them all.
        limits (None | SetAccountIsolationResultLimitsType0 | Unset): The limits `lvectl list-user` shows for the user
            (`cloudlinux`), or `systemctl show`
            for its slice (`debian`: `entry_processes` is its pools' `pm.max_children`).
        mysql (None | SetAccountIsolationResultMysqlType0 | Unset): The database limits `dbctl list --bb` shows for the
            user, when the request set them.
    """

    username: str
    cagefs: bool | None | Unset = UNSET
    enforced: None | SetAccountIsolationResultEnforcedType0 | Unset = UNSET
    limits: None | SetAccountIsolationResultLimitsType0 | Unset = UNSET
    mysql: None | SetAccountIsolationResultMysqlType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.set_account_isolation_result_enforced_type_0 import (
            SetAccountIsolationResultEnforcedType0,
        )
        from ..models.set_account_isolation_result_limits_type_0 import (
            SetAccountIsolationResultLimitsType0,
        )
        from ..models.set_account_isolation_result_mysql_type_0 import (
            SetAccountIsolationResultMysqlType0,
        )

        username = self.username

        cagefs: bool | None | Unset
        if isinstance(self.cagefs, Unset):
            cagefs = UNSET
        else:
            cagefs = self.cagefs

        enforced: dict[str, Any] | None | Unset
        if isinstance(self.enforced, Unset):
            enforced = UNSET
        elif isinstance(self.enforced, SetAccountIsolationResultEnforcedType0):
            enforced = self.enforced.to_dict()
        else:
            enforced = self.enforced

        limits: dict[str, Any] | None | Unset
        if isinstance(self.limits, Unset):
            limits = UNSET
        elif isinstance(self.limits, SetAccountIsolationResultLimitsType0):
            limits = self.limits.to_dict()
        else:
            limits = self.limits

        mysql: dict[str, Any] | None | Unset
        if isinstance(self.mysql, Unset):
            mysql = UNSET
        elif isinstance(self.mysql, SetAccountIsolationResultMysqlType0):
            mysql = self.mysql.to_dict()
        else:
            mysql = self.mysql

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "username": username,
            }
        )
        if cagefs is not UNSET:
            field_dict["cagefs"] = cagefs
        if enforced is not UNSET:
            field_dict["enforced"] = enforced
        if limits is not UNSET:
            field_dict["limits"] = limits
        if mysql is not UNSET:
            field_dict["mysql"] = mysql

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_account_isolation_result_enforced_type_0 import (
            SetAccountIsolationResultEnforcedType0,
        )
        from ..models.set_account_isolation_result_limits_type_0 import (
            SetAccountIsolationResultLimitsType0,
        )
        from ..models.set_account_isolation_result_mysql_type_0 import (
            SetAccountIsolationResultMysqlType0,
        )

        d = dict(src_dict)
        username = d.pop("username")

        def _parse_cagefs(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        cagefs = _parse_cagefs(d.pop("cagefs", UNSET))

        def _parse_enforced(
            data: object,
        ) -> None | SetAccountIsolationResultEnforcedType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                enforced_type_0 = SetAccountIsolationResultEnforcedType0.from_dict(data)

                return enforced_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetAccountIsolationResultEnforcedType0 | Unset, data)

        enforced = _parse_enforced(d.pop("enforced", UNSET))

        def _parse_limits(
            data: object,
        ) -> None | SetAccountIsolationResultLimitsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                limits_type_0 = SetAccountIsolationResultLimitsType0.from_dict(data)

                return limits_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetAccountIsolationResultLimitsType0 | Unset, data)

        limits = _parse_limits(d.pop("limits", UNSET))

        def _parse_mysql(
            data: object,
        ) -> None | SetAccountIsolationResultMysqlType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mysql_type_0 = SetAccountIsolationResultMysqlType0.from_dict(data)

                return mysql_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetAccountIsolationResultMysqlType0 | Unset, data)

        mysql = _parse_mysql(d.pop("mysql", UNSET))

        set_account_isolation_result = cls(
            username=username,
            cagefs=cagefs,
            enforced=enforced,
            limits=limits,
            mysql=mysql,
        )

        return set_account_isolation_result
