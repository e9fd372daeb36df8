from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Error")


@_attrs_define
class Error:
    """A request that did not validate: which field, why, under a stable code.

    Attributes:
        code (str): `invalid_json`, `invalid_envelope`, `unknown_operation`, `unknown_field`,
            `missing_field`, `invalid_field`, `body_too_large`, `wrong_node`.
        field (str): The JSON path of the offending field, such as `resource.domain`; empty for the body.
        message (str):
        limit (int | Unset): On queue_full: the cap the request met (its account's, the node-scope lane's, or every
            account's together).
        queued (int | Unset): On queue_full: how many requests wait under that cap.
        retry_after_s (int | Unset): On an answer with Retry-After: the same number of seconds.
    """

    code: str
    field: str
    message: str
    limit: int | Unset = UNSET
    queued: int | Unset = UNSET
    retry_after_s: int | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        code = self.code

        field = self.field

        message = self.message

        limit = self.limit

        queued = self.queued

        retry_after_s = self.retry_after_s

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "code": code,
                "field": field,
                "message": message,
            }
        )
        if limit is not UNSET:
            field_dict["limit"] = limit
        if queued is not UNSET:
            field_dict["queued"] = queued
        if retry_after_s is not UNSET:
            field_dict["retry_after_s"] = retry_after_s

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        code = d.pop("code")

        field = d.pop("field")

        message = d.pop("message")

        limit = d.pop("limit", UNSET)

        queued = d.pop("queued", UNSET)

        retry_after_s = d.pop("retry_after_s", UNSET)

        error = cls(
            code=code,
            field=field,
            message=message,
            limit=limit,
            queued=queued,
            retry_after_s=retry_after_s,
        )

        error.additional_properties = d
        return error

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
