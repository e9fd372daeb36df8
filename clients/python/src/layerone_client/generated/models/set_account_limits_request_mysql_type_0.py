from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetAccountLimitsRequestMysqlType0")


@_attrs_define
class SetAccountLimitsRequestMysqlType0:
    """The account's database limits, through MySQL Governor (`dbctl set`). Only where the
    governor is installed: elsewhere a request with them fails `unsupported_on_platform`
    and changes nothing. Absent: the account has the governor's defaults (`dbctl delete`
    when limits were set before).

        Attributes:
            cpu_percent (int): CPU of the account's queries, in % of one core.
            read_kib_per_sec (int): Reads, in KiB/s.
            write_kib_per_sec (int): Writes, in KiB/s.
    """

    cpu_percent: int
    read_kib_per_sec: int
    write_kib_per_sec: int

    def to_dict(self) -> dict[str, Any]:
        cpu_percent = self.cpu_percent

        read_kib_per_sec = self.read_kib_per_sec

        write_kib_per_sec = self.write_kib_per_sec

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cpu_percent": cpu_percent,
                "read_kib_per_sec": read_kib_per_sec,
                "write_kib_per_sec": write_kib_per_sec,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cpu_percent = d.pop("cpu_percent")

        read_kib_per_sec = d.pop("read_kib_per_sec")

        write_kib_per_sec = d.pop("write_kib_per_sec")

        set_account_limits_request_mysql_type_0 = cls(
            cpu_percent=cpu_percent,
            read_kib_per_sec=read_kib_per_sec,
            write_kib_per_sec=write_kib_per_sec,
        )

        return set_account_limits_request_mysql_type_0
