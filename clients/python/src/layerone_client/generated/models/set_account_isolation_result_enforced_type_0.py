from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="SetAccountIsolationResultEnforcedType0")


@_attrs_define
class SetAccountIsolationResultEnforcedType0:
    """On `debian`, whether this host enforces each limit; absent under LVE, which enforces
    them all.

        Attributes:
            cpu_percent (bool): The `cpu` controller.
            entry_processes (bool): PHP-FPM's `pm.max_children` of the account's pools: always.
            io_kib_per_sec (bool): The `io` controller (`blkio` on a v1 hierarchy, which throttles direct IO only).
            memory_mib (bool): The `memory` controller.
            processes (bool): The `pids` controller.
    """

    cpu_percent: bool
    entry_processes: bool
    io_kib_per_sec: bool
    memory_mib: bool
    processes: bool

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

        set_account_isolation_result_enforced_type_0 = cls(
            cpu_percent=cpu_percent,
            entry_processes=entry_processes,
            io_kib_per_sec=io_kib_per_sec,
            memory_mib=memory_mib,
            processes=processes,
        )

        return set_account_isolation_result_enforced_type_0
