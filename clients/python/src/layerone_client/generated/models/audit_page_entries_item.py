from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.audit_page_entries_item_detail_type_0 import (
        AuditPageEntriesItemDetailType0,
    )
    from ..models.audit_page_entries_item_detail_type_1 import (
        AuditPageEntriesItemDetailType1,
    )
    from ..models.audit_page_entries_item_detail_type_2 import (
        AuditPageEntriesItemDetailType2,
    )
    from ..models.audit_page_entries_item_origin_type_0_type_0 import (
        AuditPageEntriesItemOriginType0Type0,
    )
    from ..models.audit_page_entries_item_origin_type_0_type_1 import (
        AuditPageEntriesItemOriginType0Type1,
    )
    from ..models.audit_page_entries_item_origin_type_0_type_2 import (
        AuditPageEntriesItemOriginType0Type2,
    )
    from ..models.audit_page_entries_item_origin_type_0_type_3 import (
        AuditPageEntriesItemOriginType0Type3,
    )


T = TypeVar("T", bound="AuditPageEntriesItem")


@_attrs_define
class AuditPageEntriesItem:
    """One entry of the audit trail.

    Attributes:
        at_ms (int): Milliseconds since the Unix epoch when it happened (an invocation: when it started).
        detail (AuditPageEntriesItemDetailType0 | AuditPageEntriesItemDetailType1 | AuditPageEntriesItemDetailType2):
            What one audit entry records.
        seq (int): Pass it as `after` to read the entries that follow this one.
        origin (AuditPageEntriesItemOriginType0Type0 | AuditPageEntriesItemOriginType0Type1 |
            AuditPageEntriesItemOriginType0Type2 | AuditPageEntriesItemOriginType0Type3 | None | Unset): Where that job's
            request came in; absent for an entry of no job, and for a job
            received before origins were recorded.
        request_id (None | str | Unset): The job it belongs to, when it belongs to one.
    """

    at_ms: int
    detail: (
        AuditPageEntriesItemDetailType0
        | AuditPageEntriesItemDetailType1
        | AuditPageEntriesItemDetailType2
    )
    seq: int
    origin: (
        AuditPageEntriesItemOriginType0Type0
        | AuditPageEntriesItemOriginType0Type1
        | AuditPageEntriesItemOriginType0Type2
        | AuditPageEntriesItemOriginType0Type3
        | None
        | Unset
    ) = UNSET
    request_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.audit_page_entries_item_detail_type_0 import (
            AuditPageEntriesItemDetailType0,
        )
        from ..models.audit_page_entries_item_detail_type_1 import (
            AuditPageEntriesItemDetailType1,
        )
        from ..models.audit_page_entries_item_origin_type_0_type_0 import (
            AuditPageEntriesItemOriginType0Type0,
        )
        from ..models.audit_page_entries_item_origin_type_0_type_1 import (
            AuditPageEntriesItemOriginType0Type1,
        )
        from ..models.audit_page_entries_item_origin_type_0_type_2 import (
            AuditPageEntriesItemOriginType0Type2,
        )
        from ..models.audit_page_entries_item_origin_type_0_type_3 import (
            AuditPageEntriesItemOriginType0Type3,
        )

        at_ms = self.at_ms

        detail: dict[str, Any]
        if isinstance(self.detail, AuditPageEntriesItemDetailType0) or isinstance(
            self.detail, AuditPageEntriesItemDetailType1
        ):
            detail = self.detail.to_dict()
        else:
            detail = self.detail.to_dict()

        seq = self.seq

        origin: dict[str, Any] | None | Unset
        if isinstance(self.origin, Unset):
            origin = UNSET
        elif (
            isinstance(self.origin, AuditPageEntriesItemOriginType0Type0)
            or isinstance(self.origin, AuditPageEntriesItemOriginType0Type1)
            or isinstance(self.origin, AuditPageEntriesItemOriginType0Type2)
            or isinstance(self.origin, AuditPageEntriesItemOriginType0Type3)
        ):
            origin = self.origin.to_dict()
        else:
            origin = self.origin

        request_id: None | str | Unset
        if isinstance(self.request_id, Unset):
            request_id = UNSET
        else:
            request_id = self.request_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at_ms": at_ms,
                "detail": detail,
                "seq": seq,
            }
        )
        if origin is not UNSET:
            field_dict["origin"] = origin
        if request_id is not UNSET:
            field_dict["request_id"] = request_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.audit_page_entries_item_detail_type_0 import (
            AuditPageEntriesItemDetailType0,
        )
        from ..models.audit_page_entries_item_detail_type_1 import (
            AuditPageEntriesItemDetailType1,
        )
        from ..models.audit_page_entries_item_detail_type_2 import (
            AuditPageEntriesItemDetailType2,
        )
        from ..models.audit_page_entries_item_origin_type_0_type_0 import (
            AuditPageEntriesItemOriginType0Type0,
        )
        from ..models.audit_page_entries_item_origin_type_0_type_1 import (
            AuditPageEntriesItemOriginType0Type1,
        )
        from ..models.audit_page_entries_item_origin_type_0_type_2 import (
            AuditPageEntriesItemOriginType0Type2,
        )
        from ..models.audit_page_entries_item_origin_type_0_type_3 import (
            AuditPageEntriesItemOriginType0Type3,
        )

        d = dict(src_dict)
        at_ms = d.pop("at_ms")

        def _parse_detail(
            data: object,
        ) -> (
            AuditPageEntriesItemDetailType0
            | AuditPageEntriesItemDetailType1
            | AuditPageEntriesItemDetailType2
        ):
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                detail_type_0 = AuditPageEntriesItemDetailType0.from_dict(data)

                return detail_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                detail_type_1 = AuditPageEntriesItemDetailType1.from_dict(data)

                return detail_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, dict):
                raise TypeError()
            detail_type_2 = AuditPageEntriesItemDetailType2.from_dict(data)

            return detail_type_2

        detail = _parse_detail(d.pop("detail"))

        seq = d.pop("seq")

        def _parse_origin(
            data: object,
        ) -> (
            AuditPageEntriesItemOriginType0Type0
            | AuditPageEntriesItemOriginType0Type1
            | AuditPageEntriesItemOriginType0Type2
            | AuditPageEntriesItemOriginType0Type3
            | None
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                origin_type_0_type_0 = AuditPageEntriesItemOriginType0Type0.from_dict(
                    data
                )

                return origin_type_0_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                origin_type_0_type_1 = AuditPageEntriesItemOriginType0Type1.from_dict(
                    data
                )

                return origin_type_0_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                origin_type_0_type_2 = AuditPageEntriesItemOriginType0Type2.from_dict(
                    data
                )

                return origin_type_0_type_2
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                origin_type_0_type_3 = AuditPageEntriesItemOriginType0Type3.from_dict(
                    data
                )

                return origin_type_0_type_3
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                AuditPageEntriesItemOriginType0Type0
                | AuditPageEntriesItemOriginType0Type1
                | AuditPageEntriesItemOriginType0Type2
                | AuditPageEntriesItemOriginType0Type3
                | None
                | Unset,
                data,
            )

        origin = _parse_origin(d.pop("origin", UNSET))

        def _parse_request_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        request_id = _parse_request_id(d.pop("request_id", UNSET))

        audit_page_entries_item = cls(
            at_ms=at_ms,
            detail=detail,
            seq=seq,
            origin=origin,
            request_id=request_id,
        )

        audit_page_entries_item.additional_properties = d
        return audit_page_entries_item

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
