from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.set_error_pages_job_state import SetErrorPagesJobState
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.set_error_pages_job_error_type_0 import SetErrorPagesJobErrorType0
    from ..models.set_error_pages_job_timings import SetErrorPagesJobTimings
    from ..models.set_error_pages_result import SetErrorPagesResult


T = TypeVar("T", bound="SetErrorPagesJob")


@_attrs_define
class SetErrorPagesJob:
    """A job as `GET /v1/jobs/{request_id}` returns it.

    Attributes:
        attempts (int):
        operation (Literal['set_error_pages']):
        request_id (str):
        state (SetErrorPagesJobState): `received` (in inbox.db) → `queued` (admitted into state.db) → `running` →
            `succeeded` |
            `failed`; or `superseded` by a newer request for the same resource while still queued.
        timings (SetErrorPagesJobTimings): Milliseconds since the Unix epoch at each step a job has reached.
        error (None | SetErrorPagesJobErrorType0 | Unset): An operation that failed: the stable code a control plane can
            branch on, a message safe to
            show, and whether the same request may succeed later without change.
        generation (int | None | Unset): The resource's generation this job was admitted as.
        operation_sha256 (None | str | Unset): The version of the operation on the node that answers
            ([`crate::CatalogueEntry::sha256`]),
            so a control plane can tell which contract a result was made under. Absent in a view
            read without a catalogue at hand, and in views stored before it was added.
        resource_id (None | str | Unset): Stamped by the store from the validated request; absent while only received.
        result (None | SetErrorPagesResult | Unset): Present once the job succeeded.
        superseded_by (None | str | Unset): The request id of the newer job that superseded this one.
    """

    attempts: int
    operation: Literal["set_error_pages"]
    request_id: str
    state: SetErrorPagesJobState
    timings: SetErrorPagesJobTimings
    error: None | SetErrorPagesJobErrorType0 | Unset = UNSET
    generation: int | None | Unset = UNSET
    operation_sha256: None | str | Unset = UNSET
    resource_id: None | str | Unset = UNSET
    result: None | SetErrorPagesResult | Unset = UNSET
    superseded_by: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.set_error_pages_job_error_type_0 import SetErrorPagesJobErrorType0
        from ..models.set_error_pages_result import SetErrorPagesResult

        attempts = self.attempts

        operation = self.operation

        request_id = self.request_id

        state = self.state.value

        timings = self.timings.to_dict()

        error: dict[str, Any] | None | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        elif isinstance(self.error, SetErrorPagesJobErrorType0):
            error = self.error.to_dict()
        else:
            error = self.error

        generation: int | None | Unset
        if isinstance(self.generation, Unset):
            generation = UNSET
        else:
            generation = self.generation

        operation_sha256: None | str | Unset
        if isinstance(self.operation_sha256, Unset):
            operation_sha256 = UNSET
        else:
            operation_sha256 = self.operation_sha256

        resource_id: None | str | Unset
        if isinstance(self.resource_id, Unset):
            resource_id = UNSET
        else:
            resource_id = self.resource_id

        result: dict[str, Any] | None | Unset
        if isinstance(self.result, Unset):
            result = UNSET
        elif isinstance(self.result, SetErrorPagesResult):
            result = self.result.to_dict()
        else:
            result = self.result

        superseded_by: None | str | Unset
        if isinstance(self.superseded_by, Unset):
            superseded_by = UNSET
        else:
            superseded_by = self.superseded_by

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "operation": operation,
                "request_id": request_id,
                "state": state,
                "timings": timings,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if generation is not UNSET:
            field_dict["generation"] = generation
        if operation_sha256 is not UNSET:
            field_dict["operation_sha256"] = operation_sha256
        if resource_id is not UNSET:
            field_dict["resource_id"] = resource_id
        if result is not UNSET:
            field_dict["result"] = result
        if superseded_by is not UNSET:
            field_dict["superseded_by"] = superseded_by

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.set_error_pages_job_error_type_0 import SetErrorPagesJobErrorType0
        from ..models.set_error_pages_job_timings import SetErrorPagesJobTimings
        from ..models.set_error_pages_result import SetErrorPagesResult

        d = dict(src_dict)
        attempts = d.pop("attempts")

        operation = cast(Literal["set_error_pages"], d.pop("operation"))
        if operation != "set_error_pages":
            raise ValueError(
                f"operation must match const 'set_error_pages', got '{operation}'"
            )

        request_id = d.pop("request_id")

        state = SetErrorPagesJobState(d.pop("state"))

        timings = SetErrorPagesJobTimings.from_dict(d.pop("timings"))

        def _parse_error(data: object) -> None | SetErrorPagesJobErrorType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                error_type_0 = SetErrorPagesJobErrorType0.from_dict(data)

                return error_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetErrorPagesJobErrorType0 | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_generation(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        generation = _parse_generation(d.pop("generation", UNSET))

        def _parse_operation_sha256(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        operation_sha256 = _parse_operation_sha256(d.pop("operation_sha256", UNSET))

        def _parse_resource_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        resource_id = _parse_resource_id(d.pop("resource_id", UNSET))

        def _parse_result(data: object) -> None | SetErrorPagesResult | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_0 = SetErrorPagesResult.from_dict(data)

                return result_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SetErrorPagesResult | Unset, data)

        result = _parse_result(d.pop("result", UNSET))

        def _parse_superseded_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        superseded_by = _parse_superseded_by(d.pop("superseded_by", UNSET))

        set_error_pages_job = cls(
            attempts=attempts,
            operation=operation,
            request_id=request_id,
            state=state,
            timings=timings,
            error=error,
            generation=generation,
            operation_sha256=operation_sha256,
            resource_id=resource_id,
            result=result,
            superseded_by=superseded_by,
        )

        set_error_pages_job.additional_properties = d
        return set_error_pages_job

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
