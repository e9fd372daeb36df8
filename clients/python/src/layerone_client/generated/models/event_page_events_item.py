from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.event_page_events_item_kind import EventPageEventsItemKind
from ..models.event_page_events_item_state_type_1 import EventPageEventsItemStateType1
from ..models.event_page_events_item_state_type_2_type_1 import (
    EventPageEventsItemStateType2Type1,
)
from ..models.event_page_events_item_state_type_3_type_1 import (
    EventPageEventsItemStateType3Type1,
)
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.event_page_events_item_disk_type_0 import EventPageEventsItemDiskType0
    from ..models.event_page_events_item_drift_type_0 import (
        EventPageEventsItemDriftType0,
    )
    from ..models.event_page_events_item_error_type_0 import (
        EventPageEventsItemErrorType0,
    )
    from ..models.event_page_events_item_result_type_0 import (
        EventPageEventsItemResultType0,
    )


T = TypeVar("T", bound="EventPageEventsItem")


@_attrs_define
class EventPageEventsItem:
    """One entry of the events feed, in the order state.db recorded it: a job's state change
    (`kind: job`), the runner's drift check finding that the OS no longer shows what
    state.db records (`drift`) or showing it again (`drift_resolved`), or one of the node's
    file systems running out of space (`disk_full`) or having it again (`disk_ok`). Job events
    carry `request_id`, `operation` and `state`, and a `succeeded` one its `result`, a `failed`
    one its `error`, as the job's view shows them; drift events carry `drift`; disk events
    carry `disk`.

        Attributes:
            at_ms (int):
            cursor (int): Pass it as `after` to read the events that follow this one.
            kind (EventPageEventsItemKind): What an entry of the events feed reports.
            disk (EventPageEventsItemDiskType0 | None | Unset): A file system found out of space by the runner
                (`disk_full`), or with space again
                (`disk_ok`): reported once per change, not on every pass.
            drift (EventPageEventsItemDriftType0 | None | Unset): A resource recorded in state.db that the OS no longer
                shows as recorded. Reported once
                when found, once when it is gone; never repaired by the check (`rebuild_account` repairs).

                What is compared is what each family declares it derives: the files it derives whole,
                the lines it contributes to a table shared by many resources, and the settings it makes
                outside files (MariaDB's users and grants).
            error (EventPageEventsItemErrorType0 | None | Unset): The job's error, on a `failed` event only: the job view's
                `error`.
            operation (None | str | Unset):
            request_id (None | str | Unset):
            result (EventPageEventsItemResultType0 | None | Unset): The job's result, on a `succeeded` event only: the
                object `GET /v1/jobs/{request_id}`
                shows as `result` (typed there by the operation).
            state (EventPageEventsItemStateType1 | EventPageEventsItemStateType2Type1 | EventPageEventsItemStateType3Type1 |
                None | Unset): `received` (in inbox.db) → `queued` (admitted into state.db) → `running` → `succeeded` |
                `failed`; or `superseded` by a newer request for the same resource while still queued.
    """

    at_ms: int
    cursor: int
    kind: EventPageEventsItemKind
    disk: EventPageEventsItemDiskType0 | None | Unset = UNSET
    drift: EventPageEventsItemDriftType0 | None | Unset = UNSET
    error: EventPageEventsItemErrorType0 | None | Unset = UNSET
    operation: None | str | Unset = UNSET
    request_id: None | str | Unset = UNSET
    result: EventPageEventsItemResultType0 | None | Unset = UNSET
    state: (
        EventPageEventsItemStateType1
        | EventPageEventsItemStateType2Type1
        | EventPageEventsItemStateType3Type1
        | None
        | Unset
    ) = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.event_page_events_item_disk_type_0 import (
            EventPageEventsItemDiskType0,
        )
        from ..models.event_page_events_item_drift_type_0 import (
            EventPageEventsItemDriftType0,
        )
        from ..models.event_page_events_item_error_type_0 import (
            EventPageEventsItemErrorType0,
        )
        from ..models.event_page_events_item_result_type_0 import (
            EventPageEventsItemResultType0,
        )

        at_ms = self.at_ms

        cursor = self.cursor

        kind = self.kind.value

        disk: dict[str, Any] | None | Unset
        if isinstance(self.disk, Unset):
            disk = UNSET
        elif isinstance(self.disk, EventPageEventsItemDiskType0):
            disk = self.disk.to_dict()
        else:
            disk = self.disk

        drift: dict[str, Any] | None | Unset
        if isinstance(self.drift, Unset):
            drift = UNSET
        elif isinstance(self.drift, EventPageEventsItemDriftType0):
            drift = self.drift.to_dict()
        else:
            drift = self.drift

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, EventPageEventsItemErrorType0):
            error = self.error.to_dict()
        else:
            error = self.error

        operation: None | str | Unset
        if isinstance(self.operation, Unset):
            operation = UNSET
        else:
            operation = self.operation

        request_id: None | str | Unset
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        result: dict[str, Any] | None | Unset
        if isinstance(self.result, Unset):
            result = UNSET
        elif isinstance(self.result, EventPageEventsItemResultType0):
            result = self.result.to_dict()
        else:
            result = self.result

        state: None | str | Unset
        if isinstance(self.state, Unset):
            state = UNSET
        elif (
            isinstance(self.state, EventPageEventsItemStateType1)
            or isinstance(self.state, EventPageEventsItemStateType2Type1)
            or isinstance(self.state, EventPageEventsItemStateType3Type1)
        ):
            state = self.state.value
        else:
            state = self.state

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at_ms": at_ms,
                "cursor": cursor,
                "kind": kind,
            }
        )
        if disk is not UNSET:
            field_dict["disk"] = disk
        if drift is not UNSET:
            field_dict["drift"] = drift
        if error is not UNSET:
            field_dict["error"] = error
        if operation is not UNSET:
            field_dict["operation"] = operation
        if request_id is not UNSET:
            field_dict["request_id"] = request_id
        if result is not UNSET:
            field_dict["result"] = result
        if state is not UNSET:
            field_dict["state"] = state

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.event_page_events_item_disk_type_0 import (
            EventPageEventsItemDiskType0,
        )
        from ..models.event_page_events_item_drift_type_0 import (
            EventPageEventsItemDriftType0,
        )
        from ..models.event_page_events_item_error_type_0 import (
            EventPageEventsItemErrorType0,
        )
        from ..models.event_page_events_item_result_type_0 import (
            EventPageEventsItemResultType0,
        )

        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        cursor = d.pop("cursor")

        kind = EventPageEventsItemKind(d.pop("kind"))

        def _parse_disk(data: object) -> EventPageEventsItemDiskType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                disk_type_0 = EventPageEventsItemDiskType0.from_dict(data)

                return disk_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventPageEventsItemDiskType0 | None | Unset, data)

        disk = _parse_disk(d.pop("disk", UNSET))

        def _parse_drift(data: object) -> EventPageEventsItemDriftType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                drift_type_0 = EventPageEventsItemDriftType0.from_dict(data)

                return drift_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventPageEventsItemDriftType0 | None | Unset, data)

        drift = _parse_drift(d.pop("drift", UNSET))

        def _parse_error(data: object) -> EventPageEventsItemErrorType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = EventPageEventsItemErrorType0.from_dict(data)

                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventPageEventsItemErrorType0 | None | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_operation(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        operation = _parse_operation(d.pop("operation", UNSET))

        def _parse_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))

        def _parse_result(
            data: object,
        ) -> EventPageEventsItemResultType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_0 = EventPageEventsItemResultType0.from_dict(data)

                return result_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EventPageEventsItemResultType0 | None | Unset, data)

        result = _parse_result(d.pop("result", UNSET))

        def _parse_state(
            data: object,
        ) -> (
            EventPageEventsItemStateType1
            | EventPageEventsItemStateType2Type1
            | EventPageEventsItemStateType3Type1
            | None
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                state_type_1 = EventPageEventsItemStateType1(data)

                return state_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                state_type_2_type_1 = EventPageEventsItemStateType2Type1(data)

                return state_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                state_type_3_type_1 = EventPageEventsItemStateType3Type1(data)

                return state_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                EventPageEventsItemStateType1
                | EventPageEventsItemStateType2Type1
                | EventPageEventsItemStateType3Type1
                | None
                | Unset,
                data,
            )

        state = _parse_state(d.pop("state", UNSET))

        event_page_events_item = cls(
            at_ms=at_ms,
            cursor=cursor,
            kind=kind,
            disk=disk,
            drift=drift,
            error=error,
            operation=operation,
            request_id=request_id,
            result=result,
            state=state,
        )

        event_page_events_item.additional_properties = d
        return event_page_events_item

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
