from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ObserveAccountUsageResultSliceType0")


@_attrs_define
class ObserveAccountUsageResultSliceType0:
    """What the account's slice (`user-<uid>.slice`) has used, as systemd counts it
    (`debian`; `None` on `cloudlinux`, whose LVE counts for it).

        Attributes:
            cpu_usage_nsec (int | None | Unset): CPU time used (`CPUUsageNSec`), nanoseconds.
            io_read_bytes (int | None | Unset): Bytes read (`IOReadBytes`).
            io_write_bytes (int | None | Unset): Bytes written (`IOWriteBytes`).
            memory_bytes (int | None | Unset): Memory in use now (`MemoryCurrent`), bytes.
            tasks (int | None | Unset): Tasks now (`TasksCurrent`).
    """

    cpu_usage_nsec: int | None | Unset = UNSET
    io_read_bytes: int | None | Unset = UNSET
    io_write_bytes: int | None | Unset = UNSET
    memory_bytes: int | None | Unset = UNSET
    tasks: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        cpu_usage_nsec: int | None | Unset
        if isinstance(self.cpu_usage_nsec, Unset):
            cpu_usage_nsec = UNSET
        else:
            cpu_usage_nsec = self.cpu_usage_nsec

        io_read_bytes: int | None | Unset
        if isinstance(self.io_read_bytes, Unset):
            io_read_bytes = UNSET
        else:
            io_read_bytes = self.io_read_bytes

        io_write_bytes: int | None | Unset
        if isinstance(self.io_write_bytes, Unset):
            io_write_bytes = UNSET
        else:
            io_write_bytes = self.io_write_bytes

        memory_bytes: int | None | Unset
        if isinstance(self.memory_bytes, Unset):
            memory_bytes = UNSET
        else:
            memory_bytes = self.memory_bytes

        tasks: int | None | Unset
        if isinstance(self.tasks, Unset):
            tasks = UNSET
        else:
            tasks = self.tasks

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if cpu_usage_nsec is not UNSET:
            field_dict["cpu_usage_nsec"] = cpu_usage_nsec
        if io_read_bytes is not UNSET:
            field_dict["io_read_bytes"] = io_read_bytes
        if io_write_bytes is not UNSET:
            field_dict["io_write_bytes"] = io_write_bytes
        if memory_bytes is not UNSET:
            field_dict["memory_bytes"] = memory_bytes
        if tasks is not UNSET:
            field_dict["tasks"] = tasks

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_cpu_usage_nsec(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        cpu_usage_nsec = _parse_cpu_usage_nsec(d.pop("cpu_usage_nsec", UNSET))

        def _parse_io_read_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        io_read_bytes = _parse_io_read_bytes(d.pop("io_read_bytes", UNSET))

        def _parse_io_write_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        io_write_bytes = _parse_io_write_bytes(d.pop("io_write_bytes", UNSET))

        def _parse_memory_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        memory_bytes = _parse_memory_bytes(d.pop("memory_bytes", UNSET))

        def _parse_tasks(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        tasks = _parse_tasks(d.pop("tasks", UNSET))

        observe_account_usage_result_slice_type_0 = cls(
            cpu_usage_nsec=cpu_usage_nsec,
            io_read_bytes=io_read_bytes,
            io_write_bytes=io_write_bytes,
            memory_bytes=memory_bytes,
            tasks=tasks,
        )

        return observe_account_usage_result_slice_type_0
