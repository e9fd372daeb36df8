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
    from ..models.remove_account_backup_request import RemoveAccountBackupRequest


T = TypeVar("T", bound="RemoveAccountBackupEnvelope")


@_attrs_define
class RemoveAccountBackupEnvelope:
    """
    Attributes:
        operation (Literal['remove_account_backup']):
        request_id (str):
        resource (RemoveAccountBackupRequest):
    """

    operation: Literal["remove_account_backup"]
    request_id: str
    resource: RemoveAccountBackupRequest

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
        from ..models.remove_account_backup_request import RemoveAccountBackupRequest

        d = dict(src_dict)
        operation = cast(Literal["remove_account_backup"], d.pop("operation"))
        if operation != "remove_account_backup":
            raise ValueError(
                f"operation must match const 'remove_account_backup', got '{operation}'"
            )

        request_id = d.pop("request_id")

        resource = RemoveAccountBackupRequest.from_dict(d.pop("resource"))

        remove_account_backup_envelope = cls(
            operation=operation,
            request_id=request_id,
            resource=resource,
        )

        return remove_account_backup_envelope
