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

if TYPE_CHECKING:
    from ..models.ensure_redirect_request import EnsureRedirectRequest


T = TypeVar("T", bound="EnsureRedirectEnvelope")


@_attrs_define
class EnsureRedirectEnvelope:
    """
    Attributes:
        operation (Literal['ensure_redirect']):
        request_id (str):
        resource (EnsureRedirectRequest):
    """

    operation: Literal["ensure_redirect"]
    request_id: str
    resource: EnsureRedirectRequest

    def to_dict(self) -> dict[str, Any]:
        operation = self.operation

        request_id = self.request_id

        resource = self.resource.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "operation": operation,
                "request_id": request_id,
                "resource": resource,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.ensure_redirect_request import EnsureRedirectRequest

        d = dict(src_dict)
        operation = cast(Literal["ensure_redirect"], d.pop("operation"))
        if operation != "ensure_redirect":
            raise ValueError(
                f"operation must match const 'ensure_redirect', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = EnsureRedirectRequest.from_dict(d.pop("resource"))

        ensure_redirect_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return ensure_redirect_envelope
