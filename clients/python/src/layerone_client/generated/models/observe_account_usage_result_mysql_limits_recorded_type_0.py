from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ObserveAccountUsageResultMysqlLimitsRecordedType0")


@_attrs_define
class ObserveAccountUsageResultMysqlLimitsRecordedType0:
    """The database limits recorded by `set_account_limits` (its `mysql` part).

    Attributes:
        cpu_percent (int):
        read_kib_per_sec (int):
        write_kib_per_sec (int):
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

        observe_account_usage_result_mysql_limits_recorded_type_0 = cls(
            cpu_percent=cpu_percent,
            read_kib_per_sec=read_kib_per_sec,
            write_kib_per_sec=write_kib_per_sec,
        )

        return observe_account_usage_result_mysql_limits_recorded_type_0
