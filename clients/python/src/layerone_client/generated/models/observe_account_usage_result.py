from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.observe_account_usage_result_limits_in_effect_type_0 import (
        ObserveAccountUsageResultLimitsInEffectType0,
    )
    from ..models.observe_account_usage_result_limits_recorded_type_0 import (
        ObserveAccountUsageResultLimitsRecordedType0,
    )
    from ..models.observe_account_usage_result_mysql_limits_in_effect_type_0 import (
        ObserveAccountUsageResultMysqlLimitsInEffectType0,
    )
    from ..models.observe_account_usage_result_mysql_limits_recorded_type_0 import (
        ObserveAccountUsageResultMysqlLimitsRecordedType0,
    )
    from ..models.observe_account_usage_result_quota import (
        ObserveAccountUsageResultQuota,
    )
    from ..models.observe_account_usage_result_slice_type_0 import (
        ObserveAccountUsageResultSliceType0,
    )


T = TypeVar("T", bound="ObserveAccountUsageResult")


@_attrs_define
class ObserveAccountUsageResult:
    """What an account uses, and the limits in effect.

    Attributes:
        complete (bool): True only when everything beneath the home was measured. False when a bound stopped
            the walk or anything was unreadable (`unreadable_dirs`, `unreadable_entries`): the
            figures are then a lower bound.
        disk_bytes (int): Allocated bytes in the home, hard links counted once.
        disk_quota_mib (int): The quotas recorded by `ensure_account` (0: unlimited); what the kernel enforces and
            counts is `quota`.
        inode_quota (int):
        inodes (int): Inodes in the home.
        quota (ObserveAccountUsageResultQuota): The home's quota as the kernel reports it now.
        username (str):
        cagefs (bool | None | Unset): Whether the account is in CageFS (`cagefsctl --list-enabled`); `None` on debian.
        limits_in_effect (None | ObserveAccountUsageResultLimitsInEffectType0 | Unset): The limits the platform reports:
            `lvectl list-user` (`cloudlinux`); `systemctl show`
            of the account's slice once limits were set (`debian`, with the recorded entry
            processes, which its pools carry).
        limits_recorded (None | ObserveAccountUsageResultLimitsRecordedType0 | Unset): The limits recorded in state.db
            by `set_account_limits`.
        mysql_limits_in_effect (None | ObserveAccountUsageResultMysqlLimitsInEffectType0 | Unset): The database limits
            MySQL Governor applies to the account's queries (`dbctl list
            --bb`: its own, or the defaults); `None` where the governor is not installed.
        mysql_limits_recorded (None | ObserveAccountUsageResultMysqlLimitsRecordedType0 | Unset): The database limits
            recorded by `set_account_limits` (its `mysql` part).
        slice_ (None | ObserveAccountUsageResultSliceType0 | Unset): What the account's slice (`user-<uid>.slice`) has
            used, as systemd counts it
            (`debian`; `None` on `cloudlinux`, whose LVE counts for it).
        unreadable_dirs (int | Unset): Directories the tenant made unreadable to itself (mode 000): what is inside them
            is
            not in the figures. Default: 0.
        unreadable_entries (int | Unset): Entries listed but not measured (their directory lost its search permission).
            Default: 0.
    """

    complete: bool
    disk_bytes: int
    disk_quota_mib: int
    inode_quota: int
    inodes: int
    quota: ObserveAccountUsageResultQuota
    username: str
    cagefs: bool | None | Unset = UNSET
    limits_in_effect: None | ObserveAccountUsageResultLimitsInEffectType0 | Unset = (
        UNSET
    )
    limits_recorded: None | ObserveAccountUsageResultLimitsRecordedType0 | Unset = UNSET
    mysql_limits_in_effect: (
        None | ObserveAccountUsageResultMysqlLimitsInEffectType0 | Unset
    ) = UNSET
    mysql_limits_recorded: (
        None | ObserveAccountUsageResultMysqlLimitsRecordedType0 | Unset
    ) = UNSET
    slice_: None | ObserveAccountUsageResultSliceType0 | Unset = UNSET
    unreadable_dirs: int | Unset = 0
    unreadable_entries: int | Unset = 0

    def to_dict(self) -> dict[str, Any]:
        from ..models.observe_account_usage_result_limits_in_effect_type_0 import (
            ObserveAccountUsageResultLimitsInEffectType0,
        )
        from ..models.observe_account_usage_result_limits_recorded_type_0 import (
            ObserveAccountUsageResultLimitsRecordedType0,
        )
        from ..models.observe_account_usage_result_mysql_limits_in_effect_type_0 import (
            ObserveAccountUsageResultMysqlLimitsInEffectType0,
        )
        from ..models.observe_account_usage_result_mysql_limits_recorded_type_0 import (
            ObserveAccountUsageResultMysqlLimitsRecordedType0,
        )
        from ..models.observe_account_usage_result_slice_type_0 import (
            ObserveAccountUsageResultSliceType0,
        )

        complete = self.complete

        disk_bytes = self.disk_bytes

        disk_quota_mib = self.disk_quota_mib

        inode_quota = self.inode_quota

        inodes = self.inodes

        quota = self.quota.to_dict()

        username = self.username

        cagefs: bool | None | Unset
        if isinstance(self.cagefs, Unset):
            cagefs = UNSET
        else:
            cagefs = self.cagefs

        limits_in_effect: dict[str, Any] | None | Unset
        if isinstance(self.limits_in_effect, Unset):
            limits_in_effect = UNSET
        elif isinstance(
            self.limits_in_effect, ObserveAccountUsageResultLimitsInEffectType0
        ):
            limits_in_effect = self.limits_in_effect.to_dict()
        else:
            limits_in_effect = self.limits_in_effect

        limits_recorded: dict[str, Any] | None | Unset
        if isinstance(self.limits_recorded, Unset):
            limits_recorded = UNSET
        elif isinstance(
            self.limits_recorded, ObserveAccountUsageResultLimitsRecordedType0
        ):
            limits_recorded = self.limits_recorded.to_dict()
        else:
            limits_recorded = self.limits_recorded

        mysql_limits_in_effect: dict[str, Any] | None | Unset
        if isinstance(self.mysql_limits_in_effect, Unset):
            mysql_limits_in_effect = UNSET
        elif isinstance(
            self.mysql_limits_in_effect,
            ObserveAccountUsageResultMysqlLimitsInEffectType0,
        ):
            mysql_limits_in_effect = self.mysql_limits_in_effect.to_dict()
        else:
            mysql_limits_in_effect = self.mysql_limits_in_effect

        mysql_limits_recorded: dict[str, Any] | None | Unset
        if isinstance(self.mysql_limits_recorded, Unset):
            mysql_limits_recorded = UNSET
        elif isinstance(
            self.mysql_limits_recorded,
            ObserveAccountUsageResultMysqlLimitsRecordedType0,
        ):
            mysql_limits_recorded = self.mysql_limits_recorded.to_dict()
        else:
            mysql_limits_recorded = self.mysql_limits_recorded

        slice_: dict[str, Any] | None | Unset
        if isinstance(self.slice_, Unset):
            slice_ = UNSET
        elif isinstance(self.slice_, ObserveAccountUsageResultSliceType0):
            slice_ = self.slice_.to_dict()
        else:
            slice_ = self.slice_

        unreadable_dirs = self.unreadable_dirs

        unreadable_entries = self.unreadable_entries

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "complete": complete,
                "disk_bytes": disk_bytes,
                "disk_quota_mib": disk_quota_mib,
                "inode_quota": inode_quota,
                "inodes": inodes,
                "quota": quota,
                "username": username,
            }
        )
        if cagefs is not UNSET:
            field_dict["cagefs"] = cagefs
        if limits_in_effect is not UNSET:
            field_dict["limits_in_effect"] = limits_in_effect
        if limits_recorded is not UNSET:
            field_dict["limits_recorded"] = limits_recorded
        if mysql_limits_in_effect is not UNSET:
            field_dict["mysql_limits_in_effect"] = mysql_limits_in_effect
        if mysql_limits_recorded is not UNSET:
            field_dict["mysql_limits_recorded"] = mysql_limits_recorded
        if slice_ is not UNSET:
            field_dict["slice"] = slice_
        if unreadable_dirs is not UNSET:
            field_dict["unreadable_dirs"] = unreadable_dirs
        if unreadable_entries is not UNSET:
            field_dict["unreadable_entries"] = unreadable_entries

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.observe_account_usage_result_limits_in_effect_type_0 import (
            ObserveAccountUsageResultLimitsInEffectType0,
        )
        from ..models.observe_account_usage_result_limits_recorded_type_0 import (
            ObserveAccountUsageResultLimitsRecordedType0,
        )
        from ..models.observe_account_usage_result_mysql_limits_in_effect_type_0 import (
            ObserveAccountUsageResultMysqlLimitsInEffectType0,
        )
        from ..models.observe_account_usage_result_mysql_limits_recorded_type_0 import (
            ObserveAccountUsageResultMysqlLimitsRecordedType0,
        )
        from ..models.observe_account_usage_result_quota import (
            ObserveAccountUsageResultQuota,
        )
        from ..models.observe_account_usage_result_slice_type_0 import (
            ObserveAccountUsageResultSliceType0,
        )

        d = dict(src_dict)
        complete = d.pop("complete")

        disk_bytes = d.pop("disk_bytes")

        disk_quota_mib = d.pop("disk_quota_mib")

        inode_quota = d.pop("inode_quota")

        inodes = d.pop("inodes")

        quota = ObserveAccountUsageResultQuota.from_dict(d.pop("quota"))

        username = d.pop("username")

        def _parse_cagefs(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        cagefs = _parse_cagefs(d.pop("cagefs", UNSET))

        def _parse_limits_in_effect(
            data: object,
        ) -> None | ObserveAccountUsageResultLimitsInEffectType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                limits_in_effect_type_0 = (
                    ObserveAccountUsageResultLimitsInEffectType0.from_dict(data)
                )

                return limits_in_effect_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None | ObserveAccountUsageResultLimitsInEffectType0 | Unset, data
            )

        limits_in_effect = _parse_limits_in_effect(d.pop("limits_in_effect", UNSET))

        def _parse_limits_recorded(
            data: object,
        ) -> None | ObserveAccountUsageResultLimitsRecordedType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                limits_recorded_type_0 = (
                    ObserveAccountUsageResultLimitsRecordedType0.from_dict(data)
                )

                return limits_recorded_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None | ObserveAccountUsageResultLimitsRecordedType0 | Unset, data
            )

        limits_recorded = _parse_limits_recorded(d.pop("limits_recorded", UNSET))

        def _parse_mysql_limits_in_effect(
            data: object,
        ) -> None | ObserveAccountUsageResultMysqlLimitsInEffectType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mysql_limits_in_effect_type_0 = (
                    ObserveAccountUsageResultMysqlLimitsInEffectType0.from_dict(data)
                )

                return mysql_limits_in_effect_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None | ObserveAccountUsageResultMysqlLimitsInEffectType0 | Unset, data
            )

        mysql_limits_in_effect = _parse_mysql_limits_in_effect(
            d.pop("mysql_limits_in_effect", UNSET)
        )

        def _parse_mysql_limits_recorded(
            data: object,
        ) -> None | ObserveAccountUsageResultMysqlLimitsRecordedType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mysql_limits_recorded_type_0 = (
                    ObserveAccountUsageResultMysqlLimitsRecordedType0.from_dict(data)
                )

                return mysql_limits_recorded_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                None | ObserveAccountUsageResultMysqlLimitsRecordedType0 | Unset, data
            )

        mysql_limits_recorded = _parse_mysql_limits_recorded(
            d.pop("mysql_limits_recorded", UNSET)
        )

        def _parse_slice_(
            data: object,
        ) -> None | ObserveAccountUsageResultSliceType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                slice_type_0 = ObserveAccountUsageResultSliceType0.from_dict(data)

                return slice_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | ObserveAccountUsageResultSliceType0 | Unset, data)

        slice_ = _parse_slice_(d.pop("slice", UNSET))

        unreadable_dirs = d.pop("unreadable_dirs", UNSET)

        unreadable_entries = d.pop("unreadable_entries", UNSET)

        observe_account_usage_result = cls(
            complete=complete,
            disk_bytes=disk_bytes,
            disk_quota_mib=disk_quota_mib,
            inode_quota=inode_quota,
            inodes=inodes,
            quota=quota,
            username=username,
            cagefs=cagefs,
            limits_in_effect=limits_in_effect,
            limits_recorded=limits_recorded,
            mysql_limits_in_effect=mysql_limits_in_effect,
            mysql_limits_recorded=mysql_limits_recorded,
            slice_=slice_,
            unreadable_dirs=unreadable_dirs,
            unreadable_entries=unreadable_entries,
        )

        return observe_account_usage_result
