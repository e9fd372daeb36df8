from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Any,
    Literal,
    Self,
    TypeVar,
    cast,
)

from attrs import define as _attrs_define

from ..models.audit_page_entries_item_detail_type_1_stage import (
    AuditPageEntriesItemDetailType1Stage,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="AuditPageEntriesItemDetailType1")


@_attrs_define
class AuditPageEntriesItemDetailType1:
    """A tenant-scope request, when root admits or rejects it (its end is on the events feed).

    Attributes:
        kind (Literal['request']):
        operation (str): The registered operation name, or `unknown`.
        stage (AuditPageEntriesItemDetailType1Stage): Where a tenant-scope request was when it was recorded.
        code (None | str | Unset): The error code of a rejection.
    """

    kind: Literal["request"]
    operation: str
    stage: AuditPageEntriesItemDetailType1Stage
    code: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        operation = self.operation

        stage = self.stage.value

        code: None | str | Unset
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "kind": kind,
                "operation": operation,
                "stage": stage,
            }
        )
        if code is not UNSET:
            field_dict["code"] = code

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = cast(Literal["request"], d.pop("kind"))
        if kind != "request":
            raise ValueError(f"kind must match const 'request', got '{kind}'")

        operation = d.pop("operation")

        stage = AuditPageEntriesItemDetailType1Stage(d.pop("stage"))

        def _parse_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        code = _parse_code(d.pop("code", UNSET))

        audit_page_entries_item_detail_type_1 = cls(
            kind=kind,
            operation=operation,
            stage=stage,
            code=code,
        )

        return audit_page_entries_item_detail_type_1
