from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="RemoveErrorPagesJobTimings")


@_attrs_define
class RemoveErrorPagesJobTimings:
    """Milliseconds since the Unix epoch at each step a job has reached.

    Attributes:
        finished_at_ms (int | None | Unset):
        queued_at_ms (int | None | Unset):
        received_at_ms (int | None | Unset):
        started_at_ms (int | None | Unset):
    """

    finished_at_ms: int | None | Unset = UNSET
    queued_at_ms: int | None | Unset = UNSET
    received_at_ms: int | None | Unset = UNSET
    started_at_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        finished_at_ms: int | None | Unset
        if isinstance(self.finished_at_ms, Unset):
            finished_at_ms = UNSET
        else:
            finished_at_ms = self.finished_at_ms

        queued_at_ms: int | None | Unset
        if isinstance(self.queued_at_ms, Unset):
            queued_at_ms = UNSET
        else:
            queued_at_ms = self.queued_at_ms

        received_at_ms: int | None | Unset
        if isinstance(self.received_at_ms, Unset):
            received_at_ms = UNSET
        else:
            received_at_ms = self.received_at_ms

        started_at_ms: int | None | Unset
        if isinstance(self.started_at_ms, Unset):
            started_at_ms = UNSET
        else:
            started_at_ms = self.started_at_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if finished_at_ms is not UNSET:
            field_dict["finished_at_ms"] = finished_at_ms
        if queued_at_ms is not UNSET:
            field_dict["queued_at_ms"] = queued_at_ms
        if received_at_ms is not UNSET:
            field_dict["received_at_ms"] = received_at_ms
        if started_at_ms is not UNSET:
            field_dict["started_at_ms"] = started_at_ms

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_finished_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        finished_at_ms = _parse_finished_at_ms(d.pop("finished_at_ms", UNSET))

        def _parse_queued_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        queued_at_ms = _parse_queued_at_ms(d.pop("queued_at_ms", UNSET))

        def _parse_received_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        received_at_ms = _parse_received_at_ms(d.pop("received_at_ms", UNSET))

        def _parse_started_at_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        started_at_ms = _parse_started_at_ms(d.pop("started_at_ms", UNSET))

        remove_error_pages_job_timings = cls(
            finished_at_ms=finished_at_ms,
            queued_at_ms=queued_at_ms,
            received_at_ms=received_at_ms,
            started_at_ms=started_at_ms,
        )

        remove_error_pages_job_timings.additional_properties = d
        return remove_error_pages_job_timings

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
