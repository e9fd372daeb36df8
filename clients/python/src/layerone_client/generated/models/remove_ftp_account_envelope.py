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
    from ..models.remove_ftp_account_request import RemoveFtpAccountRequest


T = TypeVar("T", bound="RemoveFtpAccountEnvelope")


@_attrs_define
class RemoveFtpAccountEnvelope:
    """
    Attributes:
        operation (Literal['remove_ftp_account']):
        request_id (str):
        resource (RemoveFtpAccountRequest):
    """

    operation: Literal["remove_ftp_account"]
    request_id: str
    resource: RemoveFtpAccountRequest

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
        from ..models.remove_ftp_account_request import RemoveFtpAccountRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_ftp_account"], d.pop("operation"))
        if operation != "remove_ftp_account":
            raise ValueError(
                f"operation must match const 'remove_ftp_account', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveFtpAccountRequest.from_dict(d.pop("resource"))

        remove_ftp_account_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_ftp_account_envelope
