from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetAccountIsolationResultLimitsType0")


@_attrs_define
class SetAccountIsolationResultLimitsType0:
    """The limits `lvectl list-user` shows for the user (`cloudlinux`), or `systemctl show`
    for its slice (`debian`: `entry_processes` is its pools' `pm.max_children`).

        Attributes:
            cpu_percent (int):
            entry_processes (int):
            io_kib_per_sec (int):
            memory_mib (int):
            processes (int):
    """

    cpu_percent: int
    entry_processes: int
    io_kib_per_sec: int
    memory_mib: int
    processes: int

    def to_dict(self) -> dict[str, Any]:
        cpu_percent = self.cpu_percent

        entry_processes = self.entry_processes

        io_kib_per_sec = self.io_kib_per_sec

        memory_mib = self.memory_mib

        processes = self.processes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "cpu_percent": cpu_percent,
                "entry_processes": entry_processes,
                "io_kib_per_sec": io_kib_per_sec,
                "memory_mib": memory_mib,
                "processes": processes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cpu_percent = d.pop("cpu_percent")

        entry_processes = d.pop("entry_processes")

        io_kib_per_sec = d.pop("io_kib_per_sec")

        memory_mib = d.pop("memory_mib")

        processes = d.pop("processes")

        set_account_isolation_result_limits_type_0 = cls(
            cpu_percent=cpu_percent,
            entry_processes=entry_processes,
            io_kib_per_sec=io_kib_per_sec,
            memory_mib=memory_mib,
            processes=processes,
        )

        return set_account_isolation_result_limits_type_0
