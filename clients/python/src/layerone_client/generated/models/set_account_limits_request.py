from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.set_account_limits_request_mysql_type_0 import (
        SetAccountLimitsRequestMysqlType0,
    )


T = TypeVar("T", bound="SetAccountLimitsRequest")


@_attrs_define
class SetAccountLimitsRequest:
    """An account's resource limits: CloudLinux's LVE on `cloudlinux`, the account's systemd
    slice (`user-<uid>.slice`) on `debian`.

        Attributes:
            cpu_percent (int): CPU, in % of one core (100 = one core).
            entry_processes (int): Concurrent entry processes (web requests entering the account's LVE; on `debian` the
                PHP requests the account's pools serve at once, their `pm.max_children`); 0 =
                unlimited.
            id (str):
            io_kib_per_sec (int): Disk I/O in KiB/s; 0 = unlimited.
            memory_mib (int): Physical memory in MiB; 0 = unlimited.
            processes (int): Processes; 0 = unlimited.
            mysql (None | SetAccountLimitsRequestMysqlType0 | Unset): The account's database limits, through MySQL Governor
                (`dbctl set`). Only where the
                governor is installed: elsewhere a request with them fails `unsupported_on_platform`
                and changes nothing. Absent: the account has the governor's defaults (`dbctl delete`
                when limits were set before).
    """

    cpu_percent: int
    entry_processes: int
    id: str
    io_kib_per_sec: int
    memory_mib: int
    processes: int
    mysql: None | SetAccountLimitsRequestMysqlType0 | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.set_account_limits_request_mysql_type_0 import (
            SetAccountLimitsRequestMysqlType0,
        )

        cpu_percent = self.cpu_percent

        entry_processes = self.entry_processes

        id = self.id

        io_kib_per_sec = self.io_kib_per_sec

        memory_mib = self.memory_mib

        processes = self.processes

        mysql: dict[str, Any] | None | Unset
        if isinstance(self.mysql, Unset):
            mysql = UNSET
        elif isinstance(self.mysql, SetAccountLimitsRequestMysqlType0):
            mysql = self.mysql.to_dict()
        else:
            mysql = self.mysql

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cpu_percent": cpu_percent,
                "entry_processes": entry_processes,
                "id": id,
                "io_kib_per_sec": io_kib_per_sec,
                "memory_mib": memory_mib,
                "processes": processes,
            }
        )
        if mysql is not UNSET:
            field_dict["mysql"] = mysql

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_account_limits_request_mysql_type_0 import (
            SetAccountLimitsRequestMysqlType0,
        )

        d = dict(src_dict)
        cpu_percent = d.pop("cpu_percent")

        entry_processes = d.pop("entry_processes")

        id = d.pop("id")

        io_kib_per_sec = d.pop("io_kib_per_sec")

        memory_mib = d.pop("memory_mib")

        processes = d.pop("processes")

        def _parse_mysql(
            data: object,
        ) -> None | SetAccountLimitsRequestMysqlType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                mysql_type_0 = SetAccountLimitsRequestMysqlType0.from_dict(data)

                return mysql_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetAccountLimitsRequestMysqlType0 | Unset, data)

        mysql = _parse_mysql(d.pop("mysql", UNSET))

        set_account_limits_request = cls(
            cpu_percent=cpu_percent,
            entry_processes=entry_processes,
            id=id,
            io_kib_per_sec=io_kib_per_sec,
            memory_mib=memory_mib,
            processes=processes,
            mysql=mysql,
        )

        return set_account_limits_request
