from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.set_account_limits_result_enforced_type_0 import (
        SetAccountLimitsResultEnforcedType0,
    )
    from ..models.set_account_limits_result_limits_type_0 import (
        SetAccountLimitsResultLimitsType0,
    )
    from ..models.set_account_limits_result_mysql_type_0 import (
        SetAccountLimitsResultMysqlType0,
    )


T = TypeVar("T", bound="SetAccountLimitsResult")


@_attrs_define
class SetAccountLimitsResult:
    """The account's limits and isolation after the change, read back from the platform.

    Attributes:
        username (str):
        cagefs (bool | None | Unset): Whether `cagefsctl --list-enabled` lists the user.
        enforced (None | SetAccountLimitsResultEnforcedType0 | Unset): On `debian`, whether this host enforces each
            limit; absent under LVE, which enforces
            them all.
        limits (None | SetAccountLimitsResultLimitsType0 | Unset): The limits `lvectl list-user` shows for the user
            (`cloudlinux`), or `systemctl show`
            for its slice (`debian`: `entry_processes` is its pools' `pm.max_children`).
        mysql (None | SetAccountLimitsResultMysqlType0 | Unset): The database limits `dbctl list --bb` shows for the
            user, when the request set them.
    """

    username: str
    cagefs: bool | None | Unset = UNSET
    enforced: None | SetAccountLimitsResultEnforcedType0 | Unset = UNSET
    limits: None | SetAccountLimitsResultLimitsType0 | Unset = UNSET
    mysql: None | SetAccountLimitsResultMysqlType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.set_account_limits_result_enforced_type_0 import (
            SetAccountLimitsResultEnforcedType0,
        )
        from ..models.set_account_limits_result_limits_type_0 import (
            SetAccountLimitsResultLimitsType0,
        )
        from ..models.set_account_limits_result_mysql_type_0 import (
            SetAccountLimitsResultMysqlType0,
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
        elif isinstance(self.enforced, SetAccountLimitsResultEnforcedType0):
            enforced = self.enforced.to_dict()
        else:
            enforced = self.enforced

        limits: dict[str, Any] | None | Unset
        if isinstance(self.limits, Unset):
            limits = UNSET
        elif isinstance(self.limits, SetAccountLimitsResultLimitsType0):
            limits = self.limits.to_dict()
        else:
            limits = self.limits

        mysql: dict[str, Any] | None | Unset
        if isinstance(self.mysql, Unset):
            mysql = UNSET
        elif isinstance(self.mysql, SetAccountLimitsResultMysqlType0):
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
        from ..models.set_account_limits_result_enforced_type_0 import (
            SetAccountLimitsResultEnforcedType0,
        )
        from ..models.set_account_limits_result_limits_type_0 import (
            SetAccountLimitsResultLimitsType0,
        )
        from ..models.set_account_limits_result_mysql_type_0 import (
            SetAccountLimitsResultMysqlType0,
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
        ) -> None | SetAccountLimitsResultEnforcedType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                enforced_type_0 = SetAccountLimitsResultEnforcedType0.from_dict(data)

                return enforced_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetAccountLimitsResultEnforcedType0 | Unset, data)

        enforced = _parse_enforced(d.pop("enforced", UNSET))

        def _parse_limits(
            data: object,
        ) -> None | SetAccountLimitsResultLimitsType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                limits_type_0 = SetAccountLimitsResultLimitsType0.from_dict(data)

                return limits_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetAccountLimitsResultLimitsType0 | Unset, data)

        limits = _parse_limits(d.pop("limits", UNSET))

        def _parse_mysql(
            data: object,
        ) -> None | SetAccountLimitsResultMysqlType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mysql_type_0 = SetAccountLimitsResultMysqlType0.from_dict(data)

                return mysql_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetAccountLimitsResultMysqlType0 | Unset, data)

        mysql = _parse_mysql(d.pop("mysql", UNSET))

        set_account_limits_result = cls(
            username=username,
            cagefs=cagefs,
            enforced=enforced,
            limits=limits,
            mysql=mysql,
        )

        return set_account_limits_result
