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

from ..models.audit_page_entries_item_detail_type_2_stage import (
    AuditPageEntriesItemDetailType2Stage,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="AuditPageEntriesItemDetailType2")


@_attrs_define
class AuditPageEntriesItemDetailType2:
    """A node-scope request: once when root admits or rejects it, once when it ends.

    Attributes:
        action (str): The registered action name, or `unknown`.
        kind (Literal['node_request']):
        stage (AuditPageEntriesItemDetailType2Stage): Where a node-scope request was when it was recorded.
        code (None | str | Unset): The error code of a rejection or a failure.
    """

    action: str
    kind: Literal["node_request"]
    stage: AuditPageEntriesItemDetailType2Stage
    code: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        action = self.action

        kind = self.kind

        stage = self.stage.value

        code: None | str | Unset
        if isinstance(self.code, Unset):
            code = UNSET
        else:
            code = self.code

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "action": action,
                "kind": kind,
                "stage": stage,
            }
        )
        if code is not UNSET:
            field_dict["code"] = code

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        action = d.pop("action")

        kind = cast(Literal["node_request"], d.pop("kind"))
        if kind != "node_request":
            raise ValueError(f"kind must match const 'node_request', got '{kind}'")

        stage = AuditPageEntriesItemDetailType2Stage(d.pop("stage"))

        def _parse_code(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        code = _parse_code(d.pop("code", UNSET))

        audit_page_entries_item_detail_type_2 = cls(
            action=action,
            kind=kind,
            stage=stage,
            code=code,
        )

        return audit_page_entries_item_detail_type_2
